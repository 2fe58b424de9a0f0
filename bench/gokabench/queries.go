package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/lovoo/goka"
	"github.com/lovoo/goka/storage"
)

// Bid is a Nexmark bid as the harness writes it to the input topic (key:
// the auction id in decimal).
type Bid struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	Channel  string `json:"channel"`
	URL      string `json:"url"`
	DateTime int64  `json:"dateTime"` // epoch milliseconds
	Extra    string `json:"extra"`
}

// BidCodec is the goka.Codec of the input topic.
type BidCodec struct{}

func (BidCodec) Encode(value any) ([]byte, error) { return json.Marshal(value) }

func (BidCodec) Decode(data []byte) (any, error) {
	var b Bid
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("decoding bid: %w", err)
	}
	return &b, nil
}

// ---------------------------------------------------------------- q1

// EuroBid is q1's output: the bid's price converted to euros.
type EuroBid struct {
	Auction  int64   `json:"auction"`
	Bidder   int64   `json:"bidder"`
	Price    float64 `json:"price"`
	DateTime int64   `json:"dateTime"`
}

// EuroBidCodec is the goka.Codec of q1's output topic.
type EuroBidCodec struct{}

func (EuroBidCodec) Encode(value any) ([]byte, error) { return json.Marshal(value) }

func (EuroBidCodec) Decode(data []byte) (any, error) {
	var b EuroBid
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("decoding euro bid: %w", err)
	}
	return &b, nil
}

// q1Graph is Nexmark q1 (currency conversion), a stateless processor:
//
//	SELECT auction, bidder, 0.908 * price AS price, dateTime FROM bid
func q1Graph(group goka.Group, in, out goka.Stream) *goka.GroupGraph {
	return goka.DefineGroup(group,
		goka.Input(in, new(BidCodec), func(ctx goka.Context, msg any) {
			b := msg.(*Bid)
			ctx.Emit(out, ctx.Key(), &EuroBid{
				Auction:  b.Auction,
				Bidder:   b.Bidder,
				Price:    float64(b.Price) * 0.908,
				DateTime: b.DateTime,
			})
		}),
		goka.Output(out, new(EuroBidCodec)),
	)
}

// ---------------------------------------------------------------- agg

// windowSize is the size of agg's tumbling windows in milliseconds.
const windowSize = 10_000

// AuctionWindow is agg's state per auction, the value of the group table:
// the count and sum of prices of the auction's bids in its current
// 10-second window.
//
// goka has no windowing. A goka user keys the state by auction and keeps
// only the current window; when a bid's window start moves past the
// stored one, the count and sum start again from this bid. Bids of an
// auction arrive in order (one key, one partition) and Nexmark's dateTime
// grows with the event number, so a bid for an earlier window than the
// stored one is late: it is dropped (counted in lateBids, logged on exit),
// since the window it belongs to is no longer held.
type AuctionWindow struct {
	WindowStart int64 `json:"windowStart"`
	Count       int64 `json:"count"`
	Sum         int64 `json:"sum"`
}

// AuctionWindowCodec is the goka.Codec of agg's group table.
type AuctionWindowCodec struct{}

func (AuctionWindowCodec) Encode(value any) ([]byte, error) { return json.Marshal(value) }

func (AuctionWindowCodec) Decode(data []byte) (any, error) {
	var w AuctionWindow
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("decoding auction window: %w", err)
	}
	return &w, nil
}

// WindowResult is agg's output per update, keyed "auction@windowStart".
type WindowResult struct {
	Count int64 `json:"count"`
	Sum   int64 `json:"sum"`
}

// WindowResultCodec is the goka.Codec of agg's output topic.
type WindowResultCodec struct{}

func (WindowResultCodec) Encode(value any) ([]byte, error) { return json.Marshal(value) }

func (WindowResultCodec) Decode(data []byte) (any, error) {
	var r WindowResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decoding window result: %w", err)
	}
	return &r, nil
}

// lateBids counts the bids agg dropped because their window had passed.
var lateBids atomic.Int64

// aggGraph is a tumbling-window aggregation per auction:
//
//	SELECT auction, window_start, COUNT(*), SUM(price)
//	FROM TUMBLE(bid, dateTime, 10 s) GROUP BY auction, window_start
//
// emitting the window's running count and sum on every bid. Each update is
// also written to the group table <group>-table (goka's changelog).
func aggGraph(group goka.Group, in, out goka.Stream) *goka.GroupGraph {
	return goka.DefineGroup(group,
		goka.Input(in, new(BidCodec), func(ctx goka.Context, msg any) {
			b := msg.(*Bid)
			start := b.DateTime - b.DateTime%windowSize
			w, _ := ctx.Value().(*AuctionWindow)
			switch {
			case w == nil || start > w.WindowStart:
				w = &AuctionWindow{WindowStart: start}
			case start < w.WindowStart:
				lateBids.Add(1)
				return
			}
			w.Count++
			w.Sum += b.Price
			ctx.SetValue(w)
			ctx.Emit(out, ctx.Key()+"@"+strconv.FormatInt(start, 10),
				&WindowResult{Count: w.Count, Sum: w.Sum})
		}),
		goka.Persist(new(AuctionWindowCodec)),
		goka.Output(out, new(WindowResultCodec)),
	)
}

// ---------------------------------------------------------------- restore

// restoreGraph is a processor whose only work is recovering its group
// table, which the harness filled beforehand. Its table has agg's codec;
// recovery stores the table's bytes without decoding them.
func restoreGraph(group goka.Group, in goka.Stream) *goka.GroupGraph {
	return goka.DefineGroup(group,
		goka.Input(in, new(BidCodec), func(ctx goka.Context, msg any) {}),
		goka.Persist(new(AuctionWindowCodec)),
	)
}

// recoveryCounter counts the table records goka applies while recovering.
type recoveryCounter struct{ n atomic.Int64 }

func (c *recoveryCounter) update(ctx goka.UpdateContext, s storage.Storage, key string, value []byte) error {
	c.n.Add(1)
	return goka.DefaultUpdate(ctx, s, key, value)
}
