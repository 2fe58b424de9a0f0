package io.sluice.bench.flink;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * The Nexmark suite (issue 35): the reference query texts (resources nexmark/&lt;query&gt;.sql)
 * over the three tables of the reference model, person, auction and bid, each a Kafka table over
 * the harness's topics. Only the sink changes: the reference's blackhole connector becomes the
 * Kafka sink of the harness's output topic (JSON, no key, at-least-once, as Sluice's default), or,
 * for a sink that declares a primary key (an updating query's), the upsert-kafka sink.
 *
 * <p>The topics hold the reference fields as JSON, dateTime in epoch milliseconds and also as
 * the record timestamp; the reference's dateTime is a TIMESTAMP(3) with a watermark, so here it
 * is the computed column CAST(ts AS TIMESTAMP(3)) over the record timestamp (the job's time zone
 * is UTC), the JSON's number left unread.
 */
final class Nexmark {
    private Nexmark() {}

    /** The reference DDL's watermark delay. */
    static final String WATERMARK = "WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND";

    static TableResult insert(TableEnvironment tenv, String query, String brokers, String persons, String auctions,
            String bids, String out, String appId) throws IOException {
        String time = "  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n"
                + "  `dateTime` AS CAST(ts AS TIMESTAMP(3)),\n  " + WATERMARK + "\n";
        tenv.executeSql("CREATE TABLE person (\n"
                + "  id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING, extra STRING,\n"
                + time + ") WITH (\n" + source(brokers, persons, appId + "-person") + ")");
        tenv.executeSql("CREATE TABLE auction (\n"
                + "  id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT, expires BIGINT,\n"
                + "  seller BIGINT, category BIGINT, extra STRING,\n"
                + time + ") WITH (\n" + source(brokers, auctions, appId + "-auction") + ")");
        tenv.executeSql("CREATE TABLE bid (\n"
                + "  auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, extra STRING,\n"
                + time + ") WITH (\n" + source(brokers, bids, appId + "-bid") + ")");

        String sink = "'connector' = 'kafka',\n"
                + "  'topic' = '" + out + "',\n"
                + "  'properties.bootstrap.servers' = '" + brokers + "',\n"
                + "  'value.format' = 'json',\n"
                + "  'sink.delivery-guarantee' = 'at-least-once'";
        // A sink that declares a primary key takes an updating query's changelog (q4, q15-q18):
        // upsert-kafka writes the latest value per key (the key's columns as the JSON record key,
        // all columns in the value), a deletion as a tombstone.
        String upsert = "'connector' = 'upsert-kafka',\n"
                + "  'topic' = '" + out + "',\n"
                + "  'properties.bootstrap.servers' = '" + brokers + "',\n"
                + "  'key.format' = 'json',\n"
                + "  'value.format' = 'json'";
        TableResult insert = null;
        for (String stmt : statements(query)) {
            String to = stmt.toUpperCase().contains("PRIMARY KEY") ? upsert : sink;
            String sql = stmt.replaceAll("'connector'\\s*=\\s*'blackhole'", java.util.regex.Matcher.quoteReplacement(to));
            TableResult r = tenv.executeSql(sql);
            if (sql.stripLeading().toUpperCase().startsWith("INSERT")) {
                insert = r;
            }
        }
        if (insert == null) {
            throw new IllegalArgumentException("nexmark/" + query + ".sql has no INSERT");
        }
        return insert;
    }

    static String source(String brokers, String topic, String group) {
        return "  'connector' = 'kafka',\n"
                + "  'topic' = '" + topic + "',\n"
                + "  'properties.bootstrap.servers' = '" + brokers + "',\n"
                + "  'properties.group.id' = '" + group + "',\n"
                + "  'scan.startup.mode' = 'earliest-offset',\n"
                + "  'value.format' = 'json'\n";
    }

    /** The statements of nexmark/&lt;query&gt;.sql: comment lines dropped, split at semicolons. */
    static List<String> statements(String query) throws IOException {
        String text;
        try (InputStream in = Nexmark.class.getResourceAsStream("/nexmark/" + query + ".sql")) {
            if (in == null) {
                throw new IllegalArgumentException("no query nexmark/" + query + ".sql");
            }
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        StringBuilder b = new StringBuilder();
        for (String line : text.split("\n")) {
            if (!line.stripLeading().startsWith("--")) {
                int c = line.indexOf(" -- ");
                b.append(c >= 0 ? line.substring(0, c) : line).append('\n');
            }
        }
        List<String> out = new ArrayList<>();
        for (String s : b.toString().split(";")) {
            if (!s.isBlank()) {
                out.add(s.strip());
            }
        }
        return out;
    }
}
