package main

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The queries of the Nexmark suite (issue 35): each as Sluice runs it (the
// ksqlDB dialect, as close to the reference SQL as it allows), whether
// bench/flink and bench/kstreams have it (mode nx-<name>), and its expected
// output, computed here from the generated events.
//
// Flink runs the reference text itself (bench/flink/src/main/resources/
// nexmark/<name>.sql, only the sink's connector changed); the sources are
// the tables person, auction and bid over the three topics, with dateTime
// the record timestamp (which the generator sets to the event's dateTime).

// nxQuery is one query of the suite.
type nxQuery struct {
	name string
	// sluice is the statements after the source streams (nxSources),
	// %s the output topic (a chain's other tables name theirs after it).
	sluice string
	// inputs: the topics the query reads ("bid", "auction", "person");
	// the rates count the events of these.
	inputs []string
	flink  bool // bench/flink/run nx-<name>
	ks     bool // bench/kstreams/run nx-<name>
	// times are the output columns holding a timestamp: Sluice and Kafka
	// Streams write epoch milliseconds, Flink a TIMESTAMP(3)'s text.
	times []string
	// keyColumn, when set, is a BIGINT output column Sluice writes in the
	// record key (KAFKA format: 8 bytes big-endian, a window's bounds after
	// them) rather than the value: the check takes it from there when the
	// value lacks it.
	keyColumn string
	// final: the query writes final windows only, in bursts (contender.final).
	final bool
	// upsert: the output is an updating table's changelog, its record key
	// the table's key; the check compares the latest value of each key
	// with the expected rows (nexmark_check_table.go), and the run ends
	// once they are equal. keyColumns name the key's columns: a JSON key
	// object's fields are read as columns, a JSON key that is one value is
	// keyColumns[0].
	upsert     bool
	keyColumns []string
	// expectFor, when set instead of expect, is the output of one side
	// (S, F or KS), where the sides' outputs differ by their semantics.
	expectFor func(nx *nxEvents, side string, env nxEnv) []map[string]any
	// expect is the output as rows of column (lower case) to value: int64,
	// string, *big.Rat or nil.
	expect func(nx *nxEvents) []map[string]any
}

// nxEnv is what a side's expected output can depend on beyond the events:
// the topics' partitions, and the greatest event time in each partition of
// the bids, persons and auctions topics (Flink's final watermarks).
type nxEnv struct {
	partitions    int32
	bidsMaxTS     map[int32]int64
	personsMaxTS  map[int32]int64
	auctionsMaxTS map[int32]int64
}

// nxSources declares the reference model's three streams over the
// suite's topics (persons, auctions, bids), each a keyless stream as the
// reference's tables are (the topics' keys are not read), dateTime a
// TIMESTAMP read from the JSON's epoch milliseconds.
func nxSources(persons, auctions, bids string) string {
	return fmt.Sprintf("SET 'auto.offset.reset'='earliest';\n"+
		"CREATE STREAM PERSON (ID BIGINT, NAME VARCHAR, EMAILADDRESS VARCHAR, CREDITCARD VARCHAR, CITY VARCHAR, STATE VARCHAR, `dateTime` TIMESTAMP, EXTRA VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');\n"+
		"CREATE STREAM AUCTION (ID BIGINT, ITEMNAME VARCHAR, DESCRIPTION VARCHAR, INITIALBID BIGINT, RESERVE BIGINT, `dateTime` TIMESTAMP, EXPIRES TIMESTAMP, SELLER BIGINT, CATEGORY BIGINT, EXTRA VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');\n"+
		"CREATE STREAM BID (AUCTION BIGINT, BIDDER BIGINT, PRICE BIGINT, CHANNEL VARCHAR, URL VARCHAR, `dateTime` TIMESTAMP, EXTRA VARCHAR) WITH (KAFKA_TOPIC='%s', VALUE_FORMAT='JSON');\n",
		persons, auctions, bids)
}

// nxChannelID is q21's REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2).
var nxChannelID = regexp.MustCompile(`(&|^)channel_id=([^&]*)`)

// nxQueries is the suite in the order it runs.
var nxQueries = []*nxQuery{
	{
		name:   "q0",
		inputs: []string{"bid"},
		// Passthrough.
		sluice: "CREATE STREAM NEXMARK_Q0 WITH (KAFKA_TOPIC='%s') AS SELECT AUCTION, BIDDER, PRICE, `dateTime`, EXTRA FROM BID;\n",
		flink:  true, ks: true,
		times: []string{"datetime"},
		expect: func(nx *nxEvents) []map[string]any {
			return nxEachBid(nx, func(b bidAvro) map[string]any {
				return map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": b.Price, "datetime": b.DateTime, "extra": b.Extra}
			})
		},
	},
	{
		name:   "q1",
		inputs: []string{"bid"},
		// Currency conversion: 0.908 * price, a DECIMAL as in the reference.
		sluice: "CREATE STREAM NEXMARK_Q1 WITH (KAFKA_TOPIC='%s') AS SELECT AUCTION, BIDDER, 0.908 * PRICE AS PRICE, `dateTime`, EXTRA FROM BID;\n",
		flink:  true, ks: true,
		times: []string{"datetime"},
		expect: func(nx *nxEvents) []map[string]any {
			return nxEachBid(nx, func(b bidAvro) map[string]any {
				return map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": nxEuro(b.Price), "datetime": b.DateTime, "extra": b.Extra}
			})
		},
	},
	{
		name:   "q2",
		inputs: []string{"bid"},
		// Selection. ksqlDB has no MOD function; % is its operator.
		sluice: "CREATE STREAM NEXMARK_Q2 WITH (KAFKA_TOPIC='%s') AS SELECT AUCTION, PRICE FROM BID WHERE AUCTION % 123 = 0;\n",
		flink:  true, ks: true,
		expect: func(nx *nxEvents) []map[string]any {
			return nxEachBid(nx, func(b bidAvro) map[string]any {
				if b.Auction%123 != 0 {
					return nil
				}
				return map[string]any{"auction": b.Auction, "price": b.Price}
			})
		},
	},
	{
		name:   "q14",
		inputs: []string{"bid"},
		// Calculation. ksqlDB has no HOUR(): the hour of the UTC time is
		// CAST(FORMAT_TIMESTAMP(dateTime, 'HH', 'UTC') AS INT); the UDF
		// count_char(extra, 'c') is LEN(EXTRA) - LEN(REPLACE(EXTRA, 'c', '')).
		sluice: "CREATE STREAM NEXMARK_Q14 WITH (KAFKA_TOPIC='%s') AS SELECT AUCTION, BIDDER, 0.908 * PRICE AS PRICE,\n" +
			"  CASE\n" +
			"    WHEN CAST(FORMAT_TIMESTAMP(`dateTime`, 'HH', 'UTC') AS INT) >= 8 AND CAST(FORMAT_TIMESTAMP(`dateTime`, 'HH', 'UTC') AS INT) <= 18 THEN 'dayTime'\n" +
			"    WHEN CAST(FORMAT_TIMESTAMP(`dateTime`, 'HH', 'UTC') AS INT) <= 6 OR CAST(FORMAT_TIMESTAMP(`dateTime`, 'HH', 'UTC') AS INT) >= 20 THEN 'nightTime'\n" +
			"    ELSE 'otherTime'\n" +
			"  END AS `bidTimeType`,\n" +
			"  `dateTime`, EXTRA, LEN(EXTRA) - LEN(REPLACE(EXTRA, 'c', '')) AS C_COUNTS\n" +
			"FROM BID WHERE 0.908 * PRICE > 1000000 AND 0.908 * PRICE < 50000000;\n",
		flink: true,
		times: []string{"datetime"},
		expect: func(nx *nxEvents) []map[string]any {
			lo, hi := big.NewRat(1_000_000, 1), big.NewRat(50_000_000, 1)
			return nxEachBid(nx, func(b bidAvro) map[string]any {
				p := nxEuro(b.Price)
				if p.Cmp(lo) <= 0 || p.Cmp(hi) >= 0 {
					return nil
				}
				kind := "otherTime"
				switch h := time.UnixMilli(b.DateTime).UTC().Hour(); {
				case h >= 8 && h <= 18:
					kind = "dayTime"
				case h <= 6 || h >= 20:
					kind = "nightTime"
				}
				return map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": p, "bidtimetype": kind,
					"datetime": b.DateTime, "extra": b.Extra, "c_counts": int64(strings.Count(b.Extra, "c"))}
			})
		},
	},
	{
		name:   "q21",
		inputs: []string{"bid"},
		// Add channel id. ksqlDB's REGEXP_EXTRACT takes the pattern first
		// and LCASE is its lower().
		sluice: "CREATE STREAM NEXMARK_Q21 WITH (KAFKA_TOPIC='%s') AS SELECT AUCTION, BIDDER, PRICE, CHANNEL,\n" +
			"  CASE\n" +
			"    WHEN LCASE(CHANNEL) = 'apple' THEN '0'\n" +
			"    WHEN LCASE(CHANNEL) = 'google' THEN '1'\n" +
			"    WHEN LCASE(CHANNEL) = 'facebook' THEN '2'\n" +
			"    WHEN LCASE(CHANNEL) = 'baidu' THEN '3'\n" +
			"    ELSE REGEXP_EXTRACT('(&|^)channel_id=([^&]*)', URL, 2)\n" +
			"  END AS CHANNEL_ID\n" +
			"FROM BID WHERE REGEXP_EXTRACT('(&|^)channel_id=([^&]*)', URL, 2) IS NOT NULL OR LCASE(CHANNEL) IN ('apple', 'google', 'facebook', 'baidu');\n",
		flink: true,
		expect: func(nx *nxEvents) []map[string]any {
			return nxEachBid(nx, func(b bidAvro) map[string]any {
				var id any
				if m := nxChannelID.FindStringSubmatch(b.URL); m != nil {
					id = m[2]
				}
				switch strings.ToLower(b.Channel) {
				case "apple":
					id = "0"
				case "google":
					id = "1"
				case "facebook":
					id = "2"
				case "baidu":
					id = "3"
				default:
					if id == nil {
						return nil
					}
				}
				return map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": b.Price, "channel": b.Channel, "channel_id": id}
			})
		},
	},
	{
		name:   "q22",
		inputs: []string{"bid"},
		// Get URL directories. SPLIT_INDEX(url, '/', i) counts from 0;
		// ksqlDB's SPLIT(url, '/')[i + 1] from 1 (NULL past the end, as
		// SPLIT_INDEX).
		sluice: "CREATE STREAM NEXMARK_Q22 WITH (KAFKA_TOPIC='%s') AS SELECT AUCTION, BIDDER, PRICE, CHANNEL,\n" +
			"  SPLIT(URL, '/')[4] AS DIR1, SPLIT(URL, '/')[5] AS DIR2, SPLIT(URL, '/')[6] AS DIR3\n" +
			"FROM BID;\n",
		flink: true,
		expect: func(nx *nxEvents) []map[string]any {
			return nxEachBid(nx, func(b bidAvro) map[string]any {
				parts := strings.Split(b.URL, "/")
				dir := func(i int) any {
					if i < len(parts) {
						return parts[i]
					}
					return nil
				}
				return map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": b.Price, "channel": b.Channel,
					"dir1": dir(3), "dir2": dir(4), "dir3": dir(5)}
			})
		},
	},
}

// The joins. The reference's are regular joins (Flink keeps both inputs in
// state without end); the ksqlDB dialect joins two streams only within a
// window, so Sluice's are stream-stream joins WITHIN 1 HOURS, more than the
// event time any suite input spans (1,000,000 bids span about 18 minutes),
// which makes them the same join. A join's key goes to the record key, not
// the value: where the reference selects the join column (q20's auction),
// Sluice's output keeps it there (keyColumn).
var nxJoinQueries = []*nxQuery{
	{
		name:   "q3",
		inputs: []string{"auction", "person"},
		// Local item suggestion. The dialect wants the join key in the
		// projection: P.ID, which lands in the record key.
		sluice: "CREATE STREAM NEXMARK_Q3 WITH (KAFKA_TOPIC='%s') AS SELECT P.ID AS SELLER, P.NAME AS NAME, P.CITY AS CITY, P.STATE AS STATE, A.ID AS ID\n" +
			"FROM AUCTION A INNER JOIN PERSON P WITHIN 1 HOURS ON A.SELLER = P.ID\n" +
			"WHERE A.CATEGORY = 10 AND (P.STATE = 'OR' OR P.STATE = 'ID' OR P.STATE = 'CA');\n",
		flink: true, ks: true,
		expect: func(nx *nxEvents) []map[string]any {
			var out []map[string]any
			for _, a := range nx.auctions {
				p := nx.persons[a.Seller-1000]
				if a.Category == 10 && (p.State == "OR" || p.State == "ID" || p.State == "CA") {
					out = append(out, map[string]any{"name": p.Name, "city": p.City, "state": p.State, "id": a.ID})
				}
			}
			return out
		},
	},
	{
		name:   "q20",
		inputs: []string{"bid", "auction"},
		// Expand bid with auction.
		sluice: "CREATE STREAM NEXMARK_Q20 WITH (KAFKA_TOPIC='%s') AS SELECT\n" +
			"  B.AUCTION AS AUCTION, B.BIDDER AS BIDDER, B.PRICE AS PRICE, B.CHANNEL AS CHANNEL, B.URL AS URL, B.`dateTime` AS BID_DATETIME, B.EXTRA AS BID_EXTRA,\n" +
			"  A.ITEMNAME AS ITEMNAME, A.DESCRIPTION AS DESCRIPTION, A.INITIALBID AS INITIALBID, A.RESERVE AS RESERVE, A.`dateTime` AS AUCTION_DATETIME, A.EXPIRES AS EXPIRES,\n" +
			"  A.SELLER AS SELLER, A.CATEGORY AS CATEGORY, A.EXTRA AS AUCTION_EXTRA\n" +
			"FROM BID B INNER JOIN AUCTION A WITHIN 1 HOURS ON B.AUCTION = A.ID\n" +
			"WHERE A.CATEGORY = 10;\n",
		flink:     true,
		ks:        true,
		keyColumn: "auction",
		times:     []string{"bid_datetime", "auction_datetime", "expires"},
		expect: func(nx *nxEvents) []map[string]any {
			return nxEachBid(nx, func(b bidAvro) map[string]any {
				a := nx.auctions[b.Auction-1000]
				if a.Category != 10 {
					return nil
				}
				return map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": b.Price, "channel": b.Channel, "url": b.URL,
					"bid_datetime": b.DateTime, "bid_extra": b.Extra, "itemname": a.ItemName, "description": a.Description,
					"initialbid": a.InitialBid, "reserve": a.Reserve, "auction_datetime": a.DateTime, "expires": a.Expires,
					"seller": a.Seller, "category": a.Category, "auction_extra": a.Extra}
			})
		},
	},
}

// nxSessionGapMs is q11's session gap (the reference's 10 s);
// nxWatermarkDelayMs the reference DDL's watermark delay (Flink), and
// nxSessionGraceMs Sluice's GRACE PERIOD. Sluice's is longer than the
// watermark delay, because its lateness is measured differently: Flink's
// window operator takes the least watermark of its inputs, so the bids'
// two partitions are aligned; Sluice's stream time is per task, and the
// repartition topic by bidder interleaves what the two source tasks write,
// which can be more than 14 s of event time apart (measured at 200,000
// bids: a bidder's session split at a 122 ms gap with a 4 s grace, as its
// task's stream time had passed the session's end + gap + grace before the
// next bid arrived). Measured again at 200,000 bids (the repartition
// topics read back in offset order), a record arrived up to 34 s of event
// time behind its partition's greatest on Sluice's and up to 47 s on
// Kafka Streams' (whose two stream threads drift apart): a minute's grace
// left Kafka Streams' output short of a session or two in some runs.
// 90 s makes the output the same on every run; it only delays each
// session's result.
const (
	nxSessionGapMs     = 10_000
	nxWatermarkDelayMs = 4_000
	nxSessionGraceMs   = 90_000
)

// q11, user sessions, writes final sessions on both sides (Sluice's EMIT
// FINAL, Flink's group window), but which sessions have closed by the end
// of the input, and the bounds each writes, are each side's own:
//
//   - on both, a bid at most the gap after a session's last bid extends it
//     (Flink's windows [t, t + gap) merge when they touch);
//   - Sluice (ksqlDB's sessions): the session's end is
//     its last bid; it is written once the stream time of its task (the
//     partition of the repartition topic its bidder's key hashes to: the
//     greatest bid time there) reaches end + gap + grace;
//   - Kafka Streams (suppressed until the window closes) as Sluice: its
//     session closes at end + gap + grace too, and its repartition topic
//     holds the bidder's 8 bytes, partitioned by murmur2 as Sluice's;
//   - Flink: SESSION_END is the last bid + the gap; the session is written
//     once the watermark (the least over the bids' partitions of their
//     greatest time, less 4 s) reaches SESSION_END - 1 ms.
//
// expectFor computes each side's rows by its rules from the generated bids.
var nxSessionQuery = &nxQuery{
	name:   "q11",
	inputs: []string{"bid"},
	// ksqlDB's WINDOWSTART and WINDOWEND are the reference's SESSION_START
	// and SESSION_END (see above for the end); EMIT FINAL writes each
	// session once, as Flink's group window does.
	sluice: "CREATE TABLE NEXMARK_Q11 WITH (KAFKA_TOPIC='%s') AS SELECT BIDDER, COUNT(*) AS BID_COUNT, WINDOWSTART AS STARTTIME, WINDOWEND AS ENDTIME\n" +
		"FROM BID WINDOW SESSION (10 SECONDS, GRACE PERIOD 90 SECONDS) GROUP BY BIDDER EMIT FINAL;\n",
	flink:     true,
	ks:        true,
	final:     true,
	keyColumn: "bidder",
	times:     []string{"starttime", "endtime"},
	expectFor: func(nx *nxEvents, side string, env nxEnv) []map[string]any {
		byBidder := map[int64][]int64{}
		for _, b := range nx.bids {
			byBidder[b.Bidder] = append(byBidder[b.Bidder], b.DateTime)
		}
		// Sluice: the final stream time of each repartition partition.
		streamTime := map[int32]int64{}
		// Sluice writes its repartition topics as Java clients do
		// (exec.Partitioner): murmur2 of the key, here a BIGINT's 8 bytes.
		tp := kgo.StickyKeyPartitioner(nil).ForTopic("repartition")
		part := func(bidder int64) int32 {
			return int32(tp.Partition(&kgo.Record{Key: binary.BigEndian.AppendUint64(nil, uint64(bidder))}, int(env.partitions)))
		}
		for _, b := range nx.bids {
			p := part(b.Bidder)
			streamTime[p] = max(streamTime[p], b.DateTime)
		}
		wm := finalWatermark(env.bidsMaxTS, nxWatermarkDelayMs)
		var out []map[string]any
		for bidder, ts := range byBidder {
			slices.Sort(ts)
			first, last, n := ts[0], ts[0], int64(1)
			flush := func() {
				switch side {
				case "F":
					if end := last + nxSessionGapMs; end-1 <= wm {
						out = append(out, map[string]any{"bidder": bidder, "bid_count": n, "starttime": first, "endtime": end})
					}
				default:
					if last+nxSessionGapMs+nxSessionGraceMs <= streamTime[part(bidder)] {
						out = append(out, map[string]any{"bidder": bidder, "bid_count": n, "starttime": first, "endtime": last})
					}
				}
			}
			for _, t := range ts[1:] {
				if t-last > nxSessionGapMs {
					flush()
					first, n = t, 0
				}
				last = t
				n++
			}
			flush()
		}
		return out
	},
}

func init() { nxQueries = append(append(nxQueries, nxSessionQuery), nxJoinQueries...) }

// nxEachBid maps every bid through f, leaving out those it returns nil for.
func nxEachBid(nx *nxEvents, f func(bidAvro) map[string]any) []map[string]any {
	var out []map[string]any
	for _, b := range nx.bids {
		if r := f(b); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// nxEuro is 0.908 × price, exactly (the reference's DECIMAL).
func nxEuro(price int64) *big.Rat { return big.NewRat(price*908, 1000) }

// nxQuery finds a query of the suite by name.
func nxQueryNamed(name string) *nxQuery {
	for _, q := range nxQueries {
		if q.name == name {
			return q
		}
	}
	return nil
}
