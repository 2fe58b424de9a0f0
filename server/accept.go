package server

import (
	"mime"
	"strconv"
	"strings"
)

// Content types of the streaming endpoints' responses.
const (
	contentDelimited = "application/vnd.ksqlapi.delimited.v1"
	contentJSON      = "application/json"
	contentKSQLJSON  = "application/vnd.ksql.v1+json"
)

// negotiate picks the response content type of a request's Accept header
// among offers, as ksqlDB does: the offer with the highest q wins, an
// earlier range breaks a tie, "*/*" and "application/*" match the first
// offer. With no Accept header, or none that names an offer, it is def:
// ksqlDB's clients over HTTP/2 send none and read the delimited format.
func negotiate(accept, def string, offers ...string) string {
	best, bestQ := "", 0.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil {
				continue
			}
		}
		if q <= bestQ {
			continue
		}
		for _, o := range offers {
			if mt == o || mt == "*/*" || (mt == "application/*" && strings.HasPrefix(o, "application/")) {
				if mt != o {
					o = def
				}
				best, bestQ = o, q
				break
			}
		}
	}
	if best == "" {
		return def
	}
	return best
}

// streamFormat is the content type of a /query-stream response:
// contentJSON (one JSON array), contentDelimited (one JSON value a line,
// the default) or ContentProtobuf (rows as protobuf messages).
func streamFormat(accept string) string {
	return negotiate(accept, contentDelimited, contentDelimited, contentJSON, ContentProtobuf)
}

// insertsFormat is the content type of an /inserts-stream response:
// contentJSON (one JSON array of acks) or contentDelimited (an ack a
// line, the default).
func insertsFormat(accept string) string {
	return negotiate(accept, contentDelimited, contentDelimited, contentJSON)
}

// queryFormat is the content type of a /query response: contentKSQLJSON
// or contentJSON (one JSON array of ksqlDB's StreamedRow objects, the
// default) or contentDelimited (as /query-stream writes it).
func queryFormat(accept string) string {
	return negotiate(accept, contentJSON, contentKSQLJSON, contentJSON, contentDelimited)
}
