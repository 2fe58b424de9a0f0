// Drives `sluice server` with npm's ksqldb-client (scripts/install-node-ksqldb-client):
// node node-ksqldb-client.js URL STREAM_TOPIC TABLE_TOPIC, with NODE_PATH naming the
// client's node_modules. Prints one JSON line per step, which
// cmd/sluice/node_client_test.go compares with testdata/node-ksqldb-client.golden;
// query ids, which differ per run, are printed as "Q".
"use strict";
const KsqldbClient = require("ksqldb-client");

const [url, streamTopic, tableTopic] = process.argv.slice(2);
const { hostname, port } = new URL(url);
const print = (step, v) => console.log(JSON.stringify({ step, ...v }));
const statuses = (r) => ({
	status: r.status,
	error: r.error,
	entities: r.data && r.data.rows.map((e) => ({ type: e["@type"], status: e.commandStatus && e.commandStatus.status, message: e.commandStatus && e.commandStatus.message })),
});

async function main() {
	const client = new KsqldbClient({ host: `http://${hostname}`, port: Number(port), timeout: 60000 });
	await client.connect();
	try {
		print("create stream", statuses(await client.executeStatement(
			`CREATE STREAM node_orders (id VARCHAR KEY, item VARCHAR, qty INT) WITH (KAFKA_TOPIC='${streamTopic}', VALUE_FORMAT='JSON', PARTITIONS=1);`)));
		print("create table", statuses(await client.executeStatement(
			`CREATE TABLE node_totals WITH (KAFKA_TOPIC='${tableTopic}', PARTITIONS=1) AS SELECT id, SUM(qty) AS total, COUNT(*) AS orders FROM node_orders GROUP BY id;`,
			// From the start of the stream: on Apache Kafka the query's group
			// may join after the first insert, which "latest" would skip.
			{ streamsProperties: { "auto.offset.reset": "earliest" } })));
		const streams = await client.listStreams();
		print("list streams", { streams: streams.map((s) => ({ name: s.name, type: s.type, topic: s.topic === streamTopic ? "STREAM_TOPIC" : s.topic, keyFormat: s.keyFormat, valueFormat: s.valueFormat })) });

		for (const row of [
			{ ID: "a", ITEM: "pen", QTY: 2 },
			{ ID: "b", ITEM: "ink", QTY: 1 },
			{ ID: "a", ITEM: "pad", QTY: 5 },
		]) {
			const r = await client.insertInto("NODE_ORDERS", row);
			print("insert", { status: r.status, error: r.error, acks: r.data && r.data.rows });
		}

		const rows = [];
		const push = await client.streamQuery("SELECT id, item, qty FROM node_orders EMIT CHANGES LIMIT 3;", (d) => {
			if (d.rows) rows.push(...d.rows);
		}, { properties: { "auto.offset.reset": "earliest" } });
		const md = push.data && push.data.metadata;
		print("stream query", {
			status: push.status, error: push.error,
			metadata: md && { queryId: md.queryId ? "Q" : md.queryId, columnNames: md.columnNames, columnTypes: md.columnTypes },
			rows,
		});

		// The table's state is committed a commit interval after the
		// inserts; ask until it holds both keys with a's two orders.
		let pull;
		for (const deadline = Date.now() + 30000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
			pull = await client.query("SELECT * FROM node_totals;");
			const got = pull.data && pull.data.rows;
			if (got && got.length === 2 && got.some((r) => r.ID === "a" && r.ORDERS === 2)) break;
		}
		const pmd = pull.data && pull.data.metadata;
		print("pull query", {
			status: pull.status, error: pull.error,
			metadata: pmd && { columnNames: pmd.columnNames, columnTypes: pmd.columnTypes },
			rows: pull.data && [...pull.data.rows].sort((x, y) => (x.ID < y.ID ? -1 : 1)),
		});
	} finally {
		await client.disconnect();
	}
}

main().catch((e) => {
	console.error(e && e.stack ? e.stack : e);
	process.exit(1);
});
