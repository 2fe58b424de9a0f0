package io.sluice.bench.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * cdc-read (issue 36): reads a topic of Debezium change events — a Sluice table's sink with
 * VALUE_ENVELOPE='DEBEZIUM' — as a Flink SQL table in the {@code debezium-json} format, runs one
 * query over it to the end of the topic as it is when the job starts, applies the query's
 * changelog (+I/+U add a row, -U/-D take one out) and prints the final result.
 *
 * <pre>
 * run cdc-read --brokers ADDR --topic TOPIC --columns 'ID INT, NAME STRING' [--key ID] [--query SQL] [--parallelism N]
 * </pre>
 *
 * <p>The table is named {@code t}; {@code --columns} are its columns as Flink SQL declares them
 * (debezium-json matches them to the row images' field names exactly, case included);
 * {@code --key} declares them {@code PRIMARY KEY (…) NOT ENFORCED}; {@code --query} defaults to
 * {@code SELECT * FROM t}. Stdout holds the result's rows, one a line, fields separated by a tab
 * (NULL as {@code null}), lines sorted; nothing else. A change event debezium-json cannot read
 * fails the job ('debezium-json.ignore-parse-errors' is left false), and so does a retraction of
 * a row the result does not hold: both exit 1 with the reason on stderr. Tombstones (the null
 * value after a delete) are skipped by the format.
 */
final class CdcRead {
    private CdcRead() {}

    static void run(String[] args) throws Exception {
        String brokers = null, topic = null, columns = null, key = null, query = "SELECT * FROM t";
        int parallelism = 0;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                usage("missing value for " + a);
            }
            String v = args[++i];
            switch (a) {
                case "--brokers" -> brokers = v;
                case "--topic" -> topic = v;
                case "--columns" -> columns = v;
                case "--key" -> key = v;
                case "--query" -> query = v;
                case "--parallelism" -> parallelism = Integer.parseInt(v);
                default -> usage("unknown flag " + a);
            }
        }
        if (brokers == null || topic == null || columns == null) {
            usage("--brokers, --topic and --columns are required");
        }
        if (parallelism <= 0) {
            parallelism = Main.partitions(brokers, topic);
        }

        // The job ends with the bounded source and its local MiniCluster shuts down at once; the
        // collect iterator then warns that it cannot reach the cluster before it takes the last
        // rows from the ended job's result, as it is designed to. A failed job still throws.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.flink.streaming.api.operators.collect", "error");

        Configuration conf = new Configuration();
        conf.setString("parallelism.default", Integer.toString(parallelism));
        conf.setString("table.local-time-zone", "UTC");
        conf.setString("pipeline.name", "sluice-cdc-read-" + topic);
        TableEnvironment tenv = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        String pk = key == null ? "" : ",\n  PRIMARY KEY (" + key + ") NOT ENFORCED";
        tenv.executeSql("CREATE TABLE t (\n  " + columns + pk + "\n) WITH (\n"
                + "  'connector' = 'kafka',\n"
                + "  'topic' = '" + topic + "',\n"
                + "  'properties.bootstrap.servers' = '" + brokers + "',\n"
                + "  'properties.group.id' = 'sluice-cdc-read-" + System.currentTimeMillis() + "',\n"
                // A sink written exactly once holds aborted transactions' records too.
                + "  'properties.isolation.level' = 'read_committed',\n"
                + "  'format' = 'debezium-json',\n"
                + "  'scan.startup.mode' = 'earliest-offset',\n"
                // Bounded: each partition up to its end offset when the job starts, then the job ends.
                + "  'scan.bounded.mode' = 'latest-offset'\n"
                + ")");

        // The result as a multiset of rendered rows: a changelog's -U/-D names the row it takes
        // out by its values.
        Map<String, Integer> rows = new TreeMap<>();
        try (CloseableIterator<Row> it = tenv.executeSql(query).collect()) {
            while (it.hasNext()) {
                Row r = it.next();
                String line = render(r);
                switch (r.getKind()) {
                    case INSERT, UPDATE_AFTER -> rows.merge(line, 1, Integer::sum);
                    case UPDATE_BEFORE, DELETE -> {
                        Integer n = rows.get(line);
                        if (n == null) {
                            System.err.println("flink: " + r.getKind() + " of a row the result does not hold: " + r);
                            System.exit(1);
                        }
                        if (n == 1) {
                            rows.remove(line);
                        } else {
                            rows.put(line, n - 1);
                        }
                    }
                }
            }
        }
        List<String> out = new ArrayList<>();
        rows.forEach((line, n) -> {
            for (int i = 0; i < n; i++) {
                out.add(line);
            }
        });
        out.forEach(System.out::println);
        System.out.flush();
        // The local MiniCluster leaves non-daemon threads behind.
        System.exit(0);
    }

    static String render(Row r) {
        StringJoiner j = new StringJoiner("\t");
        for (int i = 0; i < r.getArity(); i++) {
            j.add(String.valueOf(r.getField(i)));
        }
        return j.toString();
    }

    static void usage(String why) {
        System.err.println("flink: " + why
                + "\nusage: run cdc-read --brokers ADDR --topic TOPIC --columns 'ID INT, NAME STRING' [--key ID] [--query SQL] [--parallelism N]");
        System.exit(2);
    }
}
