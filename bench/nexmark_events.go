package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
)

// The Nexmark suite's events (issue 35). generate writes the same three
// topics for every benchmark; given an *nxEvents it draws the fields the
// reference queries depend on from the reference model's distributions
// (nexmark's PersonGenerator, PriceGenerator and the bids' channels and
// URLs) and keeps every event, so that the suite can compute each query's
// expected output in Go, independently of the contenders.
//
// The draws come from nxEvents' own random source: ids, keys, timestamps,
// auctions' fields and the bids' auction, bidder, dateTime and extra are
// the ones the other benchmarks get from the same seed.

// The reference model's value lists (nexmark's PersonGenerator, and the
// bids' hot channels).
var (
	nxStates     = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	nxCities     = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	nxFirstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	nxLastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	nxHotChans   = []string{"Apple", "Google", "Facebook", "Baidu"}
)

// nxChannels is how many channels beside the hot ones the bids come from
// ("channel-<n>"), as the reference's CHANNELS_NUMBER.
const nxChannels = 10_000

// nxPerson is a Person event as the persons topic holds it (JSON names as
// in the reference model).
type nxPerson struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	EmailAddress string `json:"emailAddress"`
	CreditCard   string `json:"creditCard"`
	City         string `json:"city"`
	State        string `json:"state"`
	DateTime     int64  `json:"dateTime"`
	Extra        string `json:"extra"`
}

// nxAuction is an Auction event as the auctions topic holds it.
type nxAuction struct {
	ID          int64  `json:"id"`
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	DateTime    int64  `json:"dateTime"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
}

// nxEvents draws the suite's reference distributions and keeps every
// event generate writes, in the order written.
type nxEvents struct {
	rng      *rand.Rand
	persons  []nxPerson
	auctions []nxAuction
	bids     []bidAvro
	// noBids makes generate write the model's persons and auctions only:
	// its bids take their places in event time but are not made.
	noBids bool
}

func newNXEvents(seed uint64) *nxEvents {
	return &nxEvents{rng: rand.New(rand.NewPCG(seed^0x35, seed+35))}
}

// letters is n random lower-case letters (the reference's nextString).
func (nx *nxEvents) letters(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + nx.rng.IntN(26))
	}
	return string(b)
}

// person makes the Person event with id at ts, keeps it and returns its
// JSON value.
func (nx *nxEvents) person(id, ts int64) []byte {
	p := nxPerson{
		ID:           id,
		Name:         nxFirstNames[nx.rng.IntN(len(nxFirstNames))] + " " + nxLastNames[nx.rng.IntN(len(nxLastNames))],
		EmailAddress: nx.letters(7) + "@" + nx.letters(5) + ".com",
		CreditCard:   fmt.Sprintf("%04d %04d %04d %04d", nx.rng.IntN(1e4), nx.rng.IntN(1e4), nx.rng.IntN(1e4), nx.rng.IntN(1e4)),
		City:         nxCities[nx.rng.IntN(len(nxCities))],
		State:        nxStates[nx.rng.IntN(len(nxStates))],
		DateTime:     ts,
		Extra:        nx.letters(10 + nx.rng.IntN(20)),
	}
	nx.persons = append(nx.persons, p)
	v, _ := json.Marshal(p)
	return v
}

// bid gives b the reference model's price, channel and URL, keeps it and
// returns it. The price is log-uniform over 100 … 100,000,000 (the
// reference's PriceGenerator: round(10^(6u) × 100)); half the bids come
// from one of the four hot channels, whose URLs carry no channel id, the
// others from "channel-<n>", nine in ten with channel_id=<n's bits
// reversed> in the URL; every URL has three directories of five letters,
// which q22 splits out.
func (nx *nxEvents) bid(b bidAvro) bidAvro {
	b.Price = int64(math.Round(math.Pow(10, nx.rng.Float64()*6) * 100))
	b.URL = "https://www.nexmark.com/" + nx.letters(5) + "/" + nx.letters(5) + "/" + nx.letters(5) + "/item.htm?query=1"
	if nx.rng.IntN(2) == 0 {
		b.Channel = nxHotChans[nx.rng.IntN(len(nxHotChans))]
	} else {
		n := nx.rng.IntN(nxChannels)
		b.Channel = fmt.Sprintf("channel-%d", n)
		if nx.rng.IntN(10) > 0 {
			id := int64(int32(bits.Reverse32(uint32(n))))
			if id < 0 {
				id = -id
			}
			b.URL += fmt.Sprintf("&channel_id=%d", id)
		}
	}
	nx.bids = append(nx.bids, b)
	return b
}
