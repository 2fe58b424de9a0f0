// Package ksqlwire holds ksqlDB's REST API as Go types: the request
// bodies, the entities a /ksql answer is an array of, the error bodies, and
// the header and row elements of /query-stream and /query answers, each in
// the JSON shape ksqlDB gives it (field order included, which the server's
// answers keep).
//
// Place in the flow: one definition serves every side of the wire. server
// encodes these types; shell's Remote backend and the test runner's REST
// cases decode them. It imports nothing of ours, so clients use it without
// importing the server.
//
// Example (a client reading a /ksql answer):
//
//	ents, err := ksqlwire.DecodeEntities(body)
//	for _, e := range ents {
//		switch x := e.(type) {
//		case *ksqlwire.SourceList:
//			… x.Streams or x.Tables …
//		case *ksqlwire.CurrentStatus:
//			fmt.Println(x.CommandStatus.Message)
//		}
//	}
package ksqlwire
