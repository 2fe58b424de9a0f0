package io.sluice.bench.kstreams;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.WindowStore;

/**
 * Kafka Streams 4.4 implementations of the queries Sluice is benchmarked against.
 *
 * <pre>
 * run &lt;q1|q2|agg|agg-late|session|join|restore|nx-q0|nx-q1|nx-q2|nx-q3|nx-q5|nx-q7|nx-q8|nx-q11|nx-q20&gt; --brokers ADDR --in TOPIC --out TOPIC --app-id ID
 *     [--state-dir DIR] [--table TOPIC]
 * </pre>
 *
 * Written the way a typical Kafka Streams user would write them: the DSL, a Jackson JSON serde
 * over small POJOs, default store types (RocksDB with a changelog). Stdout carries nothing but
 * the restore mode's RESTORED line; logging goes to stderr at WARN (simplelogger.properties).
 */
public final class Main {

  static final ObjectMapper MAPPER = new ObjectMapper();

  // ------------------------------------------------------------------ records

  /** A Nexmark bid as it is on the input topic. */
  @JsonIgnoreProperties(ignoreUnknown = true)
  @JsonPropertyOrder({"auction", "bidder", "price", "channel", "url", "dateTime", "extra"})
  public static final class Bid {
    public long auction;
    public long bidder;
    public long price;
    public String channel;
    public String url;
    public long dateTime;
    public String extra;
  }

  /** Nexmark q1: the bid with its price converted to euros. */
  @JsonPropertyOrder({"auction", "bidder", "price", "dateTime"})
  public static final class CurrencyBid {
    public long auction;
    public long bidder;
    public double price;
    public long dateTime;

    public CurrencyBid() {}

    CurrencyBid(Bid b) {
      auction = b.auction;
      bidder = b.bidder;
      price = b.price * 0.908;
      dateTime = b.dateTime;
    }
  }

  /** Nexmark suite q0 (issue 35): the reference's columns of a bid, passed through. */
  @JsonPropertyOrder({"auction", "bidder", "price", "dateTime", "extra"})
  public static final class NxBid {
    public long auction;
    public long bidder;
    public long price;
    public long dateTime;
    public String extra;

    public NxBid() {}

    NxBid(Bid b) {
      auction = b.auction;
      bidder = b.bidder;
      price = b.price;
      dateTime = b.dateTime;
      extra = b.extra;
    }
  }

  /** Nexmark suite q1: the price in euros, 0.908 * price as the reference's exact DECIMAL. */
  @JsonPropertyOrder({"auction", "bidder", "price", "dateTime", "extra"})
  public static final class NxEuroBid {
    static final BigDecimal RATE = new BigDecimal("0.908");
    public long auction;
    public long bidder;
    public BigDecimal price;
    public long dateTime;
    public String extra;

    public NxEuroBid() {}

    NxEuroBid(Bid b) {
      auction = b.auction;
      bidder = b.bidder;
      price = RATE.multiply(BigDecimal.valueOf(b.price));
      dateTime = b.dateTime;
      extra = b.extra;
    }
  }

  /** Nexmark suite q2: auction and price of the selected bids. */
  @JsonPropertyOrder({"auction", "price"})
  public static final class NxAuctionPrice {
    public long auction;
    public long price;

    public NxAuctionPrice() {}

    NxAuctionPrice(Bid b) {
      auction = b.auction;
      price = b.price;
    }
  }

  /** The agg mode's aggregate: count and sum of price per auction and window. */
  @JsonPropertyOrder({"count", "sum"})
  public static final class CountSum {
    public long count;
    public long sum;
  }

  /** A Nexmark auction as it is on the auctions topic (only the fields the join keeps). */
  @JsonIgnoreProperties(ignoreUnknown = true)
  public static final class Auction {
    public long id;
    public long seller;
    public long category;
  }

  /** The join mode's output: the bid with its auction's seller and category (null if unknown). */
  @JsonPropertyOrder({"auction", "bidder", "price", "dateTime", "seller", "category"})
  public static final class SellerBid {
    public long auction;
    public long bidder;
    public long price;
    public long dateTime;
    public Long seller;
    public Long category;

    public SellerBid() {}

    SellerBid(Bid b, Auction a) {
      auction = b.auction;
      bidder = b.bidder;
      price = b.price;
      dateTime = b.dateTime;
      if (a != null) {
        seller = a.seller;
        category = a.category;
      }
    }
  }

  /** The usual hand-written Jackson serde. */
  static <T> Serde<T> jsonSerde(Class<T> type) {
    Serializer<T> ser =
        (topic, value) -> {
          if (value == null) return null;
          try {
            return MAPPER.writeValueAsBytes(value);
          } catch (IOException e) {
            throw new RuntimeException("cannot write " + type.getSimpleName(), e);
          }
        };
    Deserializer<T> de =
        (topic, bytes) -> {
          if (bytes == null) return null;
          try {
            return MAPPER.readValue(bytes, type);
          } catch (IOException e) {
            throw new RuntimeException("cannot read " + type.getSimpleName(), e);
          }
        };
    return Serdes.serdeFrom(ser, de);
  }

  // ------------------------------------------------------------------ topologies

  static final Serde<String> STRING = Serdes.String();
  static final Serde<Bid> BID = jsonSerde(Bid.class);

  static Topology q1(String in, String out) {
    StreamsBuilder b = new StreamsBuilder();
    b.stream(in, Consumed.with(STRING, BID))
        .mapValues(CurrencyBid::new)
        .to(out, Produced.with(STRING, jsonSerde(CurrencyBid.class)));
    return b.build();
  }

  static Topology q2(String in, String out) {
    StreamsBuilder b = new StreamsBuilder();
    b.stream(in, Consumed.with(STRING, BID))
        .filter((k, bid) -> bid.auction % 123 == 0)
        .to(out, Produced.with(STRING, BID));
    return b.build();
  }

  /** The Nexmark suite's stateless queries (issue 35): q0, q1, q2 with the reference's columns. */
  static Topology nexmarkStateless(String query, String in, String out) {
    StreamsBuilder b = new StreamsBuilder();
    var bids = b.stream(in, Consumed.with(STRING, BID));
    switch (query) {
      case "q0" -> bids.mapValues(NxBid::new).to(out, Produced.with(STRING, jsonSerde(NxBid.class)));
      case "q1" -> bids.mapValues(NxEuroBid::new).to(out, Produced.with(STRING, jsonSerde(NxEuroBid.class)));
      case "q2" -> bids.filter((k, bid) -> bid.auction % 123 == 0)
          .mapValues(NxAuctionPrice::new)
          .to(out, Produced.with(STRING, jsonSerde(NxAuctionPrice.class)));
      default -> usage("the Nexmark suite's query " + query + " has no Kafka Streams version");
    }
    return b.build();
  }

  static Topology agg(String in, String out) {
    Serde<CountSum> countSum = jsonSerde(CountSum.class);
    StreamsBuilder b = new StreamsBuilder();
    b.stream(in, Consumed.with(STRING, BID))
        .groupByKey()
        // Tumbling 10 s windows on the record timestamp (= dateTime), with a small grace for
        // slightly out-of-order bids.
        .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofSeconds(10), Duration.ofSeconds(2)))
        .aggregate(
            CountSum::new,
            (auction, bid, acc) -> {
              acc.count++;
              acc.sum += bid.price;
              return acc;
            },
            // Default store: RocksDB, with a changelog topic. The record cache is off so that
            // every update is emitted downstream (no suppression, no cache de-duplication).
            Materialized.<String, CountSum, WindowStore<Bytes, byte[]>>as("agg-store")
                .withKeySerde(STRING)
                .withValueSerde(countSum)
                .withCachingDisabled())
        .toStream()
        .map((wk, v) -> KeyValue.pair(wk.key() + "@" + wk.window().start(), v))
        .to(out, Produced.with(STRING, countSum));
    return b.build();
  }

  /**
   * session: a count per bidder over session windows (2 s inactivity gap, 2 s grace). The input
   * is the copy of the bids keyed by bidder, so groupByKey needs no repartition. With the cache
   * off every update is emitted, and a merged session's predecessors are retracted by tombstones
   * (null values), as Sluice's EMIT CHANGES does.
   */
  static Topology session(String in, String out) {
    StreamsBuilder b = new StreamsBuilder();
    b.stream(in, Consumed.with(STRING, BID))
        .groupByKey()
        .windowedBy(SessionWindows.ofInactivityGapAndGrace(Duration.ofSeconds(2), Duration.ofSeconds(2)))
        .count(
            Materialized.<String, Long, SessionStore<Bytes, byte[]>>as("session-store")
                .withKeySerde(STRING)
                .withValueSerde(Serdes.Long())
                .withCachingDisabled())
        .toStream()
        .map((wk, v) -> KeyValue.pair(wk.key() + "@" + wk.window().start(), v))
        .to(out, Produced.with(STRING, Serdes.Long()));
    return b.build();
  }

  /**
   * join: a stream-table left join, each bid enriched with its auction's seller and category from
   * a KTable over the auctions topic (keyed by auction id, like the bids, so co-partitioned and
   * no repartition). Kafka Streams picks records across the two inputs of a task in timestamp
   * order, and an auction is older than its bids, so the table holds it when its bids arrive.
   */
  static Topology join(String in, String table, String out) {
    StreamsBuilder b = new StreamsBuilder();
    KTable<String, Auction> auctions =
        b.table(
            table,
            Consumed.with(STRING, jsonSerde(Auction.class)),
            Materialized.<String, Auction, KeyValueStore<Bytes, byte[]>>as("auctions-store"));
    b.stream(in, Consumed.with(STRING, BID))
        .leftJoin(auctions, SellerBid::new)
        .to(out, Produced.with(STRING, jsonSerde(SellerBid.class)));
    return b.build();
  }

  static Topology restore(String in, Properties props) {
    StreamsBuilder b = new StreamsBuilder();
    // A KTable straight from the input topic. With topology.optimization=all (set in main) the
    // input topic itself serves as the store's changelog (source-topic reuse): no
    // "-restore-store-changelog" topic is created, and on a start with empty local state the
    // store is restored from the input topic, as Kafka Streams users with such a table get.
    b.table(
        in,
        Consumed.with(STRING, STRING),
        Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("restore-store"));
    return b.build(props);
  }

  // ------------------------------------------------------------------ main

  public static void main(String[] args) throws Exception {
    final long jvmStart = ManagementFactory.getRuntimeMXBean().getStartTime();
    // Everything but the RESTORED line goes to stderr: keep stray prints off stdout.
    final PrintStream stdout = System.out;
    System.setOut(System.err);

    if (args.length < 1) usage("missing mode");
    String mode = args[0];
    String brokers = null, in = null, out = null, appId = null, stateDir = null, table = null, persons = null, auctions = null;
    for (int i = 1; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) usage("missing value for " + a);
      String v = args[++i];
      switch (a) {
        case "--brokers" -> brokers = v;
        case "--in" -> in = v;
        case "--out" -> out = v;
        case "--app-id" -> appId = v;
        case "--state-dir" -> stateDir = v;
        case "--table" -> table = v;
        case "--persons" -> persons = v;
        case "--auctions" -> auctions = v;
        default -> usage("unknown flag " + a);
      }
    }
    if (brokers == null || in == null || out == null || appId == null) {
      usage("--brokers, --in, --out and --app-id are required");
    }
    Path tempState = null;
    if (stateDir == null) {
      tempState = Files.createTempDirectory("kstreams-bench-");
      stateDir = tempState.toString();
    }

    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
    // One stream thread per input partition, as Sluice runs one task per partition in parallel:
    // every task gets its own thread (Kafka Streams has one task per input partition, and a
    // thread runs its tasks one after another). More threads than partitions would idle.
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, partitions(brokers, in));
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");

    Topology topology;
    switch (mode) {
      case "q1" -> {
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = q1(in, out);
      }
      case "q2" -> {
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = q2(in, out);
      }
      case "nx-q3" -> {
        if (persons == null || auctions == null) usage("nx-q3 needs --persons and --auctions");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = Nexmark.q3(persons, auctions, out);
      }
      case "nx-q11" -> {
        // Suppression forwards a session only once it closes; no record cache in front of it.
        stateful(props, StreamsConfig.AT_LEAST_ONCE);
        topology = Nexmark.q11(in, out);
      }
      case "nx-q5" -> {
        // The record cache stays on: it folds a window's updates before the changelog and the
        // suppression buffer (five hopping windows per bid), which forwards a window only once
        // it closes; commits every 100 ms so that nothing waits long for a flush.
        stateful(props, StreamsConfig.AT_LEAST_ONCE);
        props.remove(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG);
        topology = Nexmark.q5(in, out);
      }
      case "nx-q7" -> {
        // As q5: the cache folds the one key's updates; commits every 100 ms.
        stateful(props, StreamsConfig.AT_LEAST_ONCE);
        props.remove(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG);
        topology = Nexmark.q7(in, out);
      }
      case "nx-q8" -> {
        if (persons == null || auctions == null) usage("nx-q8 needs --persons and --auctions");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = Nexmark.q8(persons, auctions, out);
      }
      case "nx-q20" -> {
        if (auctions == null) usage("nx-q20 needs --auctions");
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = Nexmark.q20(in, auctions, out);
      }
      case "nx-q0", "nx-q1", "nx-q2" -> {
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = nexmarkStateless(mode.substring(3), in, out);
      }
      case "agg", "agg-late" -> {
        // agg-late is the same topology over bids of which some are late (within the grace).
        stateful(props, StreamsConfig.EXACTLY_ONCE_V2);
        topology = agg(in, out);
      }
      case "session" -> {
        stateful(props, StreamsConfig.EXACTLY_ONCE_V2);
        topology = session(in, out);
      }
      case "join" -> {
        if (table == null) usage("join needs --table");
        // The join emits one record per bid whatever the cache does (the stream side is not
        // cached); the table's store keeps the default cache, which only saves RocksDB writes.
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
        topology = join(in, table, out);
      }
      case "restore" -> {
        // Reuse the KTable's source topic as its changelog (see restore()).
        props.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE);
        topology = restore(in, props);
      }
      default -> {
        usage("unknown mode " + mode);
        return;
      }
    }

    // Kafka Streams does not create sink topics; the broker does not auto-create them either.
    if (!mode.equals("restore")) ensureOutputTopic(brokers, in, out);

    KafkaStreams streams = new KafkaStreams(topology, props);
    CountDownLatch closed = new CountDownLatch(1);
    AtomicBoolean failed = new AtomicBoolean();
    streams.setUncaughtExceptionHandler(
        e -> {
          System.err.println("kstreams-bench: stream thread failed: " + e);
          e.printStackTrace(System.err);
          failed.set(true);
          return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler
              .StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });

    if (mode.equals("restore")) {
      AtomicLong restored = new AtomicLong();
      AtomicLong restoreEnd = new AtomicLong(); // wall-clock ms of the latest onRestoreEnd
      AtomicBoolean printed = new AtomicBoolean();
      streams.setGlobalStateRestoreListener(
          new StateRestoreListener() {
            @Override
            public void onRestoreStart(TopicPartition tp, String store, long start, long end) {}

            @Override
            public void onBatchRestored(TopicPartition tp, String store, long end, long n) {}

            @Override
            public void onRestoreEnd(TopicPartition tp, String store, long total) {
              restored.addAndGet(total);
              restoreEnd.set(System.currentTimeMillis());
            }
          });
      // The client reaches RUNNING only once its thread has restored all its tasks' stores, so
      // the first RUNNING means "restore complete". Millis are counted from the JVM's start.
      streams.setStateListener(
          (now, before) -> {
            if (now == KafkaStreams.State.RUNNING && printed.compareAndSet(false, true)) {
              long end = restoreEnd.get();
              if (end == 0) end = System.currentTimeMillis(); // nothing needed restoring
              stdout.println("RESTORED " + restored.get() + " " + (end - jvmStart));
              stdout.flush();
            }
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
              closed.countDown();
            }
          });
    } else {
      streams.setStateListener(
          (now, before) -> {
            if (now == KafkaStreams.State.NOT_RUNNING || now == KafkaStreams.State.ERROR) {
              closed.countDown();
            }
          });
    }

    final Path tempStateDir = tempState;
    AtomicBoolean terminating = new AtomicBoolean();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  terminating.set(true);
                  close(streams);
                  if (tempStateDir != null) deleteTree(tempStateDir);
                  // The client is closed: exit 0 rather than the JVM's 143 for SIGTERM.
                  Runtime.getRuntime().halt(failed.get() ? 1 : 0);
                },
                "kstreams-bench-shutdown"));

    streams.start();
    closed.await();
    // On SIGTERM the hook closes the client and the JVM exits when the hook is done.
    if (terminating.get()) return;
    // The client stopped by itself (an error).
    close(streams);
    System.exit(failed.get() ? 1 : 0);
  }

  /**
   * The settings of the aggregations (agg, agg-late, session). The record cache
   * (statestore.cache.max.bytes) is 0: the benchmark's output is one update per input record
   * (Sluice's EMIT CHANGES), and a cache would fold updates of a key between commits and emit
   * fewer records (the docs' advice for a changelog-per-update output); the stores also say
   * withCachingDisabled. commit.interval.ms is 100, which is Kafka Streams' default under
   * exactly_once_v2 (30 s is the at_least_once default): output is visible to read_committed
   * consumers only when a transaction commits, so the interval is the output's latency, and
   * Sluice commits its transactions at a comparable cadence.
   */
  static void stateful(Properties props, String guarantee) {
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, guarantee);
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
  }

  /** The partition count of a topic. */
  static int partitions(String brokers, String topic) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
      return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
    }
  }

  /**
   * Closes the client and leaves the consumer group, so that a restart with the same
   * application.id (as the restore benchmark does) is assigned its partitions at once instead of
   * waiting out session.timeout.ms (45 s) for this member to expire. Kafka Streams' own default
   * close does not leave the group.
   */
  static void close(KafkaStreams streams) {
    streams.close(
        CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
            .withTimeout(Duration.ofSeconds(30)));
  }

  /** Creates --out, with --in's partition count and replication factor 1, if it is missing. */
  static void ensureOutputTopic(String brokers, String in, String out) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers))) {
      if (admin.listTopics().names().get().contains(out)) return;
      TopicDescription d = admin.describeTopics(List.of(in)).allTopicNames().get().get(in);
      try {
        admin
            .createTopics(List.of(new NewTopic(out, d.partitions().size(), (short) 1)))
            .all()
            .get();
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) throw e;
      }
    }
  }

  static void deleteTree(Path root) {
    try (Stream<Path> s = Files.walk(root)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
    }
  }

  static void usage(String why) {
    System.err.println("kstreams-bench: " + why);
    System.err.println(
        "usage: run <q1|q2|agg|agg-late|session|join|restore|nx-q0|nx-q1|nx-q2|nx-q3|nx-q5|nx-q7|nx-q8|nx-q11|nx-q20> --brokers ADDR --in TOPIC --out TOPIC"
            + " --app-id ID [--state-dir DIR] [--table TOPIC]");
    System.exit(2);
  }
}
