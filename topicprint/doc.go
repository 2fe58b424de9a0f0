// Package topicprint is PRINT: it reads a Kafka topic's records as they
// are, without knowing their formats, and writes each as the line ksqlDB's
// PRINT writes.
//
// The embedded shell reads records with a Reader; `sluice server` streams
// Line of each from /query; the remote shell reads those lines back with
// ParseLine. Both shells then print the same Record, so PRINT looks the
// same with and without --server.
//
//	rd, _ := topicprint.Open(ctx, conn, &parser.Print{Topic: "pageviews", FromBeginning: true, Limit: 2, HasLimit: true})
//	defer rd.Close()
//	for {
//		rec, err := rd.Next(ctx)
//		if err != nil {
//			break // io.EOF: LIMIT reached
//		}
//		fmt.Println(topicprint.Line(rec))
//		// rowtime: 2026/12/03 18:00:00.000 Z, key: home, value: {"user":"ann"}, partition: 0
//	}
package topicprint
