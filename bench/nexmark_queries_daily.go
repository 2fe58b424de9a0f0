package main

import "time"

// The suite's queries whose output is an updating table (issue 35): q4
// (average price per category), q15, q16 and q17 (daily statistics) and
// q18 (last bid per bidder and auction). Each side writes a changelog:
// Sluice's EMIT CHANGES writes a table's changes, one record per update
// (fewer where its aggregate cache folds updates of a key together);
// Flink's upsert-kafka sink writes the latest value per primary key
// (updates as they come, a deletion as a tombstone). How many records and
// which intermediate values each writes are its own, so the check compares
// what the output says in the end: the latest value of each record key
// (upsert: nxQuery.upsert, nexmark_check_table.go).
//
// The ksqlDB dialect has no FILTER clause on an aggregate: the reference's
// count(*) filter (where c) is COUNT(CASE WHEN c THEN 1 END) and
// count(distinct x) filter (where c) is COUNT_DISTINCT(CASE WHEN c THEN x
// END), both counting non-NULL values only, as FILTER leaves the rows out.
// DATE_FORMAT(dateTime, p) is FORMAT_TIMESTAMP(dateTime, p, 'UTC') (Flink's
// job runs in UTC). Flink's AVG of a BIGINT is a BIGINT (the sum divided by
// the count, truncated); ksqlDB's is a DOUBLE, so Sluice casts it. A
// grouping by more than one column needs a key format that holds several
// columns: KEY_FORMAT='JSON' (Sluice's default KAFKA key holds one).

// nxDay is the reference's DATE_FORMAT(dateTime, 'yyyy-MM-dd') in UTC.
func nxDay(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02") }

// nxRank is q15–q17's price ranks: rank1 below 10,000, rank2 below
// 1,000,000, rank3 the rest.
func nxRank(price int64) int {
	switch {
	case price < 10_000:
		return 1
	case price < 1_000_000:
		return 2
	}
	return 3
}

// nxRankCounts is the Sluice text of q15–q16's twelve counts: bids,
// distinct bidders and distinct auctions, in all and per price rank.
const nxRankCounts = "  COUNT(*) AS TOTAL_BIDS,\n" +
	"  COUNT(CASE WHEN PRICE < 10000 THEN 1 END) AS RANK1_BIDS,\n" +
	"  COUNT(CASE WHEN PRICE >= 10000 AND PRICE < 1000000 THEN 1 END) AS RANK2_BIDS,\n" +
	"  COUNT(CASE WHEN PRICE >= 1000000 THEN 1 END) AS RANK3_BIDS,\n" +
	"  COUNT_DISTINCT(BIDDER) AS TOTAL_BIDDERS,\n" +
	"  COUNT_DISTINCT(CASE WHEN PRICE < 10000 THEN BIDDER END) AS RANK1_BIDDERS,\n" +
	"  COUNT_DISTINCT(CASE WHEN PRICE >= 10000 AND PRICE < 1000000 THEN BIDDER END) AS RANK2_BIDDERS,\n" +
	"  COUNT_DISTINCT(CASE WHEN PRICE >= 1000000 THEN BIDDER END) AS RANK3_BIDDERS,\n" +
	"  COUNT_DISTINCT(AUCTION) AS TOTAL_AUCTIONS,\n" +
	"  COUNT_DISTINCT(CASE WHEN PRICE < 10000 THEN AUCTION END) AS RANK1_AUCTIONS,\n" +
	"  COUNT_DISTINCT(CASE WHEN PRICE >= 10000 AND PRICE < 1000000 THEN AUCTION END) AS RANK2_AUCTIONS,\n" +
	"  COUNT_DISTINCT(CASE WHEN PRICE >= 1000000 THEN AUCTION END) AS RANK3_AUCTIONS\n"

// nxRankStats accumulates q15–q16's counts for one group.
type nxRankStats struct {
	bids     [4]int64 // [0] all, [r] rank r
	bidders  [4]map[int64]bool
	auctions [4]map[int64]bool
	minute   string // q16's max(DATE_FORMAT(dateTime, 'HH:mm'))
}

func (s *nxRankStats) add(b bidAvro) {
	for _, i := range []int{0, nxRank(b.Price)} {
		if s.bidders[i] == nil {
			s.bidders[i], s.auctions[i] = map[int64]bool{}, map[int64]bool{}
		}
		s.bids[i]++
		s.bidders[i][b.Bidder] = true
		s.auctions[i][b.Auction] = true
	}
	s.minute = max(s.minute, time.UnixMilli(b.DateTime).UTC().Format("15:04"))
}

// row is the twelve counts as output columns.
func (s *nxRankStats) row() map[string]any {
	r := map[string]any{}
	for i, name := range []string{"total", "rank1", "rank2", "rank3"} {
		r[name+"_bids"] = s.bids[i]
		r[name+"_bidders"] = int64(len(s.bidders[i]))
		r[name+"_auctions"] = int64(len(s.auctions[i]))
	}
	return r
}

var nxDailyQueries = []*nxQuery{
	{
		name:   "q15",
		inputs: []string{"bid"},
		// Bidding statistics per day.
		sluice: "CREATE TABLE NEXMARK_Q15 WITH (KAFKA_TOPIC='%s', KEY_FORMAT='JSON') AS SELECT\n" +
			"  FORMAT_TIMESTAMP(`dateTime`, 'yyyy-MM-dd', 'UTC') AS `day`,\n" + nxRankCounts +
			"FROM BID GROUP BY FORMAT_TIMESTAMP(`dateTime`, 'yyyy-MM-dd', 'UTC') EMIT CHANGES;\n",
		flink:      true,
		upsert:     true,
		keyColumns: []string{"day"},
		expect: func(nx *nxEvents) []map[string]any {
			days := map[string]*nxRankStats{}
			for _, b := range nx.bids {
				d := nxDay(b.DateTime)
				if days[d] == nil {
					days[d] = &nxRankStats{}
				}
				days[d].add(b)
			}
			var out []map[string]any
			for d, s := range days {
				r := s.row()
				r["day"] = d
				out = append(out, r)
			}
			return out
		},
	},
	{
		name:   "q16",
		inputs: []string{"bid"},
		// Channel statistics per day; minute is the latest HH:mm of the
		// group's bids (max of a string).
		sluice: "CREATE TABLE NEXMARK_Q16 WITH (KAFKA_TOPIC='%s', KEY_FORMAT='JSON') AS SELECT\n" +
			"  CHANNEL, FORMAT_TIMESTAMP(`dateTime`, 'yyyy-MM-dd', 'UTC') AS `day`,\n" +
			"  MAX(FORMAT_TIMESTAMP(`dateTime`, 'HH:mm', 'UTC')) AS `minute`,\n" + nxRankCounts +
			"FROM BID GROUP BY CHANNEL, FORMAT_TIMESTAMP(`dateTime`, 'yyyy-MM-dd', 'UTC') EMIT CHANGES;\n",
		flink:      true,
		upsert:     true,
		keyColumns: []string{"channel", "day"},
		expect: func(nx *nxEvents) []map[string]any {
			type key struct{ channel, day string }
			groups := map[key]*nxRankStats{}
			for _, b := range nx.bids {
				k := key{b.Channel, nxDay(b.DateTime)}
				if groups[k] == nil {
					groups[k] = &nxRankStats{}
				}
				groups[k].add(b)
			}
			var out []map[string]any
			for k, s := range groups {
				r := s.row()
				r["channel"], r["day"], r["minute"] = k.channel, k.day, s.minute
				out = append(out, r)
			}
			return out
		},
	},
	{
		name:   "q17",
		inputs: []string{"bid"},
		// Auction statistics per day.
		sluice: "CREATE TABLE NEXMARK_Q17 WITH (KAFKA_TOPIC='%s', KEY_FORMAT='JSON') AS SELECT\n" +
			"  AUCTION, FORMAT_TIMESTAMP(`dateTime`, 'yyyy-MM-dd', 'UTC') AS `day`,\n" +
			"  COUNT(*) AS TOTAL_BIDS,\n" +
			"  COUNT(CASE WHEN PRICE < 10000 THEN 1 END) AS RANK1_BIDS,\n" +
			"  COUNT(CASE WHEN PRICE >= 10000 AND PRICE < 1000000 THEN 1 END) AS RANK2_BIDS,\n" +
			"  COUNT(CASE WHEN PRICE >= 1000000 THEN 1 END) AS RANK3_BIDS,\n" +
			"  MIN(PRICE) AS MIN_PRICE, MAX(PRICE) AS MAX_PRICE, CAST(AVG(PRICE) AS BIGINT) AS AVG_PRICE, SUM(PRICE) AS SUM_PRICE\n" +
			"FROM BID GROUP BY AUCTION, FORMAT_TIMESTAMP(`dateTime`, 'yyyy-MM-dd', 'UTC') EMIT CHANGES;\n",
		flink:      true,
		upsert:     true,
		keyColumns: []string{"auction", "day"},
		expect: func(nx *nxEvents) []map[string]any {
			type key struct {
				auction int64
				day     string
			}
			type stats struct {
				n, min, max, sum int64
				ranks            [4]int64
			}
			groups := map[key]*stats{}
			var order []key
			for _, b := range nx.bids {
				k := key{b.Auction, nxDay(b.DateTime)}
				s := groups[k]
				if s == nil {
					s = &stats{}
					s.min, s.max = b.Price, b.Price
					groups[k] = s
					order = append(order, k)
				}
				s.n++
				s.ranks[nxRank(b.Price)]++
				s.min, s.max = min(s.min, b.Price), max(s.max, b.Price)
				s.sum += b.Price
			}
			out := make([]map[string]any, 0, len(order))
			for _, k := range order {
				s := groups[k]
				out = append(out, map[string]any{"auction": k.auction, "day": k.day, "total_bids": s.n,
					"rank1_bids": s.ranks[1], "rank2_bids": s.ranks[2], "rank3_bids": s.ranks[3],
					"min_price": s.min, "max_price": s.max, "avg_price": s.sum / s.n, "sum_price": s.sum})
			}
			return out
		},
	},
	{
		name:   "q18",
		inputs: []string{"bid"},
		// Last bid per bidder and auction. The reference keeps the row
		// ranked first by dateTime descending (ROW_NUMBER() OVER
		// (PARTITION BY bidder, auction ORDER BY dateTime DESC) = 1); the
		// dialect has no OVER, and LATEST_BY_OFFSET keeps the latest by
		// offset. The two agree here: the bids are keyed by auction, so all
		// the bids of a (bidder, auction) are in one partition, written in
		// time order, and Sluice's repartition by (bidder, auction) keeps
		// that order (one source partition writes them all). false keeps a
		// NULL as the latest value (ksqlDB ignores NULLs by default), so
		// every column comes from the same bid, as the reference's row.
		sluice: "CREATE TABLE NEXMARK_Q18 WITH (KAFKA_TOPIC='%s', KEY_FORMAT='JSON') AS SELECT\n" +
			"  BIDDER, AUCTION, LATEST_BY_OFFSET(PRICE, false) AS PRICE, LATEST_BY_OFFSET(CHANNEL, false) AS CHANNEL,\n" +
			"  LATEST_BY_OFFSET(URL, false) AS URL, LATEST_BY_OFFSET(`dateTime`, false) AS `dateTime`, LATEST_BY_OFFSET(EXTRA, false) AS EXTRA\n" +
			"FROM BID GROUP BY BIDDER, AUCTION EMIT CHANGES;\n",
		flink:      true,
		upsert:     true,
		keyColumns: []string{"bidder", "auction"},
		times:      []string{"datetime"},
		expect: func(nx *nxEvents) []map[string]any {
			type key struct{ bidder, auction int64 }
			last := map[key]bidAvro{}
			var order []key
			for _, b := range nx.bids {
				k := key{b.Bidder, b.Auction}
				if l, ok := last[k]; !ok {
					order = append(order, k)
				} else if l.DateTime > b.DateTime {
					continue
				}
				last[k] = b
			}
			out := make([]map[string]any, 0, len(order))
			for _, k := range order {
				b := last[k]
				out = append(out, map[string]any{"auction": b.Auction, "bidder": b.Bidder, "price": b.Price, "channel": b.Channel,
					"url": b.URL, "datetime": b.DateTime, "extra": b.Extra})
			}
			return out
		},
	},
	{
		name:   "q4",
		inputs: []string{"bid", "auction"},
		// Average price per category: the highest bid of each auction
		// among the bids in its life (the reference's subquery, here a
		// table of its own), then the average of those per category, an
		// aggregation over a table: a new highest bid of an auction takes
		// its old one out of the category's average and puts the new one
		// in. The join is a regular join in the reference; as q20's, it is
		// WITHIN 1 HOURS here, longer than any input the suite writes.
		// The first table's topic is named after the output topic: one
		// of its own per run.
		sluice: "CREATE TABLE NEXMARK_Q4_WINNING WITH (KAFKA_TOPIC='%s-winning', KEY_FORMAT='JSON') AS SELECT A.ID AS ID, A.CATEGORY AS CATEGORY, MAX(B.PRICE) AS FINAL\n" +
			"FROM AUCTION A INNER JOIN BID B WITHIN 1 HOURS ON A.ID = B.AUCTION\n" +
			"WHERE B.`dateTime` BETWEEN A.`dateTime` AND A.EXPIRES\n" +
			"GROUP BY A.ID, A.CATEGORY EMIT CHANGES;\n" +
			"CREATE TABLE NEXMARK_Q4 WITH (KAFKA_TOPIC='%s', KEY_FORMAT='JSON') AS SELECT CATEGORY AS ID, CAST(AVG(FINAL) AS BIGINT) AS FINAL\n" +
			"FROM NEXMARK_Q4_WINNING GROUP BY CATEGORY EMIT CHANGES;\n",
		flink:      true,
		upsert:     true,
		keyColumns: []string{"id"},
		expect: func(nx *nxEvents) []map[string]any {
			final := map[int64]int64{} // auction → its highest bid in its life
			for _, b := range nx.bids {
				a := nx.auctions[b.Auction-1000]
				if b.DateTime >= a.DateTime && b.DateTime <= a.Expires {
					if p, ok := final[a.ID]; !ok || b.Price > p {
						final[a.ID] = b.Price
					}
				}
			}
			type avg struct{ sum, n int64 }
			byCategory := map[int64]*avg{}
			for id, p := range final {
				c := nx.auctions[id-1000].Category
				if byCategory[c] == nil {
					byCategory[c] = &avg{}
				}
				byCategory[c].sum += p
				byCategory[c].n++
			}
			var out []map[string]any
			for c, a := range byCategory {
				out = append(out, map[string]any{"id": c, "final": a.sum / a.n})
			}
			return out
		},
	},
}

func init() { nxQueries = append(nxQueries, nxDailyQueries...) }
