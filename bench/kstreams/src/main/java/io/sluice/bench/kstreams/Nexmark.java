package io.sluice.bench.kstreams;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import java.time.Duration;
import java.util.Set;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;

/**
 * The Nexmark suite's joins (issue 35) in the Kafka Streams DSL. The reference's q3 and q20 are
 * regular joins, which keep both inputs without end; the DSL's stream-stream join keeps each side
 * for its window, so a window of an hour, longer than any input the harness writes, is the same
 * join (as Sluice's WITHIN 1 HOURS). The topics' keys are the ids as decimal strings, so bids
 * (keyed by auction) and auctions (keyed by id) are co-partitioned; q3 re-keys the auctions by
 * seller (a repartition topic).
 */
final class Nexmark {
  private Nexmark() {}

  static final JoinWindows HOUR = JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofHours(1));

  /** A Nexmark auction as the auctions topic holds it. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public static final class Auction {
    public long id;
    public String itemName;
    public String description;
    public long initialBid;
    public long reserve;
    public long dateTime;
    public long expires;
    public long seller;
    public long category;
    public String extra;
  }

  /** A Nexmark person as the persons topic holds it. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public static final class Person {
    public long id;
    public String name;
    public String emailAddress;
    public String creditCard;
    public String city;
    public String state;
    public long dateTime;
    public String extra;
  }

  /** q3's row: the seller's name, city and state, and the auction's id. */
  @JsonPropertyOrder({"name", "city", "state", "id"})
  public static final class LocalItem {
    public String name;
    public String city;
    public String state;
    public long id;

    public LocalItem() {}

    LocalItem(Auction a, Person p) {
      name = p.name;
      city = p.city;
      state = p.state;
      id = a.id;
    }
  }

  /** q20's row: the bid and its auction. */
  @JsonPropertyOrder({"auction", "bidder", "price", "channel", "url", "bid_dateTime", "bid_extra", "itemName",
      "description", "initialBid", "reserve", "auction_dateTime", "expires", "seller", "category", "auction_extra"})
  public static final class BidAuction {
    public long auction;
    public long bidder;
    public long price;
    public String channel;
    public String url;
    @JsonProperty("bid_dateTime") public long bidDateTime;
    @JsonProperty("bid_extra") public String bidExtra;
    public String itemName;
    public String description;
    public long initialBid;
    public long reserve;
    @JsonProperty("auction_dateTime") public long auctionDateTime;
    public long expires;
    public long seller;
    public long category;
    @JsonProperty("auction_extra") public String auctionExtra;

    public BidAuction() {}

    BidAuction(Main.Bid b, Auction a) {
      auction = b.auction;
      bidder = b.bidder;
      price = b.price;
      channel = b.channel;
      url = b.url;
      bidDateTime = b.dateTime;
      bidExtra = b.extra;
      itemName = a.itemName;
      description = a.description;
      initialBid = a.initialBid;
      reserve = a.reserve;
      auctionDateTime = a.dateTime;
      expires = a.expires;
      seller = a.seller;
      category = a.category;
      auctionExtra = a.extra;
    }
  }

  /** q11's row: a bidder's closed session, its bid count and bounds (epoch ms). */
  @JsonPropertyOrder({"bidder", "bid_count", "starttime", "endtime"})
  public static final class Session {
    public long bidder;
    @JsonProperty("bid_count") public long bidCount;
    public long starttime;
    public long endtime;

    public Session() {}

    Session(Windowed<Long> w, long n) {
      bidder = w.key();
      bidCount = n;
      starttime = w.window().start();
      endtime = w.window().end();
    }
  }

  /** q11's session gap (the reference's 10 s) and grace (Sluice's, see bench/nexmark_queries.go). */
  static final SessionWindows SESSIONS =
      SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(90));

  /**
   * q11: bids per bidder per session, each session written once it closes (suppressed until the
   * stream time passes its end + grace), as Sluice's EMIT FINAL writes it.
   */
  static Topology q11(String bids, String out) {
    StreamsBuilder b = new StreamsBuilder();
    b.stream(bids, Consumed.with(Main.STRING, Main.BID))
        .groupBy((k, bid) -> bid.bidder, Grouped.with(Serdes.Long(), Main.BID))
        .windowedBy(SESSIONS)
        .count()
        .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
        .toStream()
        .map((w, n) -> KeyValue.pair(Long.toString(w.key()), new Session(w, n)))
        .to(out, Produced.with(Main.STRING, Main.jsonSerde(Session.class)));
    return b.build();
  }

  static final Serde<Auction> AUCTION = Main.jsonSerde(Auction.class);
  static final Serde<Person> PERSON = Main.jsonSerde(Person.class);
  static final Set<String> LOCAL_STATES = Set.of("OR", "ID", "CA");

  /** q3: auctions of category 10 joined with their seller, if the seller lives in OR, ID or CA. */
  static Topology q3(String persons, String auctions, String out) {
    StreamsBuilder b = new StreamsBuilder();
    KStream<String, Auction> bySeller = b.stream(auctions, Consumed.with(Main.STRING, AUCTION))
        .filter((k, a) -> a.category == 10)
        .selectKey((k, a) -> Long.toString(a.seller));
    KStream<String, Person> local = b.stream(persons, Consumed.with(Main.STRING, PERSON))
        .filter((k, p) -> LOCAL_STATES.contains(p.state));
    bySeller.join(local, LocalItem::new, HOUR, StreamJoined.with(Main.STRING, AUCTION, PERSON))
        .to(out, Produced.with(Main.STRING, Main.jsonSerde(LocalItem.class)));
    return b.build();
  }

  /** q20: each bid with its auction, for auctions of category 10. */
  static Topology q20(String bids, String auctions, String out) {
    StreamsBuilder b = new StreamsBuilder();
    KStream<String, Auction> cat10 = b.stream(auctions, Consumed.with(Main.STRING, AUCTION))
        .filter((k, a) -> a.category == 10);
    b.stream(bids, Consumed.with(Main.STRING, Main.BID))
        .join(cat10, BidAuction::new, HOUR, StreamJoined.with(Main.STRING, Main.BID, AUCTION))
        .to(out, Produced.with(Main.STRING, Main.jsonSerde(BidAuction.class)));
    return b.build();
  }

  /** q7's row: a bid whose price is the highest of its window. */
  @JsonPropertyOrder({"auction", "price", "bidder", "dateTime", "extra"})
  public static final class HighestBid {
    public long auction;
    public long price;
    public long bidder;
    public long dateTime;
    public String extra;

    public HighestBid() {}

    HighestBid(Main.Bid b) {
      auction = b.auction;
      price = b.price;
      bidder = b.bidder;
      dateTime = b.dateTime;
      extra = b.extra;
    }
  }

  /**
   * The 10 s tumbling windows of q7, closed (and written once) after the 90 s grace Sluice
   * uses too (bench/nexmark_winjoin.go: the repartition topic interleaves the source tasks' bids).
   */
  static final TimeWindows TUMBLE_10S = TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(90));

  /**
   * The join of q7's bids with their window's highest price: the window result reaches the join
   * well after the bids that closed it, so the join keeps both sides for an hour of event time,
   * longer than any input the harness writes (as Sluice's GRACE PERIOD 1 HOURS).
   */
  static final JoinWindows WITHIN_10S_HOUR_GRACE =
      JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(10), Duration.ofHours(1));

  /**
   * q7: the highest price of each 10 s window (every bid under one key, suppressed until the
   * window closes), re-keyed by that price and joined with the bids re-keyed by theirs; a bid
   * matches when its time lies between the window's last millisecond (the reference's
   * TUMBLE_ROWTIME) less 10 s and that millisecond.
   */
  static Topology q7(String bids, String out) {
    StreamsBuilder b = new StreamsBuilder();
    KStream<String, Main.Bid> all = b.stream(bids, Consumed.with(Main.STRING, Main.BID));
    KStream<Long, Long> maxPrice = all
        .groupBy((k, bid) -> 1, Grouped.with(Serdes.Integer(), Main.BID))
        .windowedBy(TUMBLE_10S)
        .aggregate(() -> Long.MIN_VALUE, (k, bid, m) -> Math.max(m, bid.price),
            Materialized.with(Serdes.Integer(), Serdes.Long()))
        .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
        .toStream()
        // The price, and the window's rowtime (its end is exclusive).
        .map((w, price) -> KeyValue.pair(price, w.window().end() - 1));
    all.selectKey((k, bid) -> bid.price)
        .join(maxPrice,
            (bid, rowtime) -> bid.dateTime >= rowtime - 10_000 && bid.dateTime <= rowtime ? new HighestBid(bid) : null,
            WITHIN_10S_HOUR_GRACE, StreamJoined.with(Serdes.Long(), Main.BID, Serdes.Long()))
        .filter((price, row) -> row != null)
        .to(out, Produced.with(Serdes.Long(), Main.jsonSerde(HighestBid.class)));
    return b.build();
  }

  /** q8's row: a person who created an auction in the window they registered in, and its start. */
  @JsonPropertyOrder({"id", "name", "stime"})
  public static final class NewUser {
    public long id;
    public String name;
    public long stime;

    public NewUser() {}

    NewUser(Person p, long start) {
      id = p.id;
      name = p.name;
      stime = start;
    }
  }

  /** The start of the 10 s tumbling window holding t (epoch ms, not negative). */
  static long tumbleStart(long t) {
    return t - t % 10_000;
  }

  /**
   * q8: the persons re-keyed by id joined with the auctions re-keyed by seller, within the window
   * (10 s), where both fall in the same 10 s tumbling window: the reference's row, once per auction
   * the person created in it, as Sluice writes it (bench/nexmark_winjoin.go says why not a join of
   * windowed aggregates). The join keeps both sides for an hour (the grace), as Sluice's.
   */
  static Topology q8(String persons, String auctions, String out) {
    StreamsBuilder b = new StreamsBuilder();
    KStream<Long, Auction> bySeller = b.stream(auctions, Consumed.with(Main.STRING, AUCTION))
        .selectKey((k, a) -> a.seller);
    b.stream(persons, Consumed.with(Main.STRING, PERSON))
        .selectKey((k, p) -> p.id)
        .join(bySeller,
            (p, a) -> tumbleStart(p.dateTime) == tumbleStart(a.dateTime) ? new NewUser(p, tumbleStart(p.dateTime)) : null,
            WITHIN_10S_HOUR_GRACE, StreamJoined.with(Serdes.Long(), PERSON, AUCTION))
        .filter((id, row) -> row != null)
        .to(out, Produced.with(Serdes.Long(), Main.jsonSerde(NewUser.class)));
    return b.build();
  }

  /** q5's row: an auction's bid count in a window (by its start) where no auction has more. */
  @JsonPropertyOrder({"starttime", "auction", "num"})
  public static final class HotItem {
    public long starttime;
    public long auction;
    public long num;

    public HotItem() {}

    HotItem(long starttime, long auction, long num) {
      this.starttime = starttime;
      this.auction = auction;
      this.num = num;
    }
  }

  /** q5's windows: 10 s sliding by 2 s, and a window per start (2 s) for their maxima. */
  static final TimeWindows HOP_10S_2S =
      TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(90)).advanceBy(Duration.ofSeconds(2));
  static final TimeWindows TUMBLE_2S = TimeWindows.ofSizeAndGrace(Duration.ofSeconds(2), Duration.ofSeconds(60));
  static final JoinWindows WITHIN_1S_HOUR_GRACE =
      JoinWindows.ofTimeDifferenceAndGrace(Duration.ofSeconds(1), Duration.ofHours(1));

  /** A closed window's count as a HotItem keyed and timed by the window's start. */
  static final class CountAtStart implements Processor<Windowed<Long>, Long, Long, HotItem> {
    private ProcessorContext<Long, HotItem> ctx;

    @Override
    public void init(ProcessorContext<Long, HotItem> context) {
      ctx = context;
    }

    @Override
    public void process(Record<Windowed<Long>, Long> r) {
      long start = r.key().window().start();
      ctx.forward(new Record<>(start, new HotItem(start, r.key().key(), r.value()), start));
    }
  }

  /** A closed window's maximum keyed and timed by the hop start it is the maximum of. */
  static final class MaxAtStart implements Processor<Windowed<Long>, Long, Long, Long> {
    private ProcessorContext<Long, Long> ctx;

    @Override
    public void init(ProcessorContext<Long, Long> context) {
      ctx = context;
    }

    @Override
    public void process(Record<Windowed<Long>, Long> r) {
      ctx.forward(new Record<>(r.key().key(), r.value(), r.key().key()));
    }
  }

  /**
   * q5 as Sluice's chain (bench/nexmark_winjoin.go): the bids per auction and hopping window,
   * suppressed until each window closes, re-keyed and timed by the window's start; their greatest
   * count per start (a 2 s tumbling window holds one start), suppressed likewise; the counts joined
   * with the maxima on the start, a count kept where it is the maximum.
   */
  static Topology q5(String bids, String out) {
    StreamsBuilder b = new StreamsBuilder();
    Serde<HotItem> item = Main.jsonSerde(HotItem.class);
    KStream<Long, HotItem> counts = b.stream(bids, Consumed.with(Main.STRING, Main.BID))
        .groupBy((k, bid) -> bid.auction, Grouped.with(Serdes.Long(), Main.BID))
        .windowedBy(HOP_10S_2S)
        .count()
        .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
        .toStream()
        .process(CountAtStart::new);
    KStream<Long, Long> maxima = counts
        .groupByKey(Grouped.with(Serdes.Long(), item))
        .windowedBy(TUMBLE_2S)
        .aggregate(() -> 0L, (start, c, m) -> Math.max(m, c.num), Materialized.with(Serdes.Long(), Serdes.Long()))
        .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()))
        .toStream()
        .process(MaxAtStart::new);
    counts.join(maxima, (c, maxn) -> c.num >= maxn ? c : null, WITHIN_1S_HOUR_GRACE,
            StreamJoined.with(Serdes.Long(), item, Serdes.Long()))
        .filter((start, c) -> c != null)
        .to(out, Produced.with(Serdes.Long(), item));
    return b.build();
  }
}
