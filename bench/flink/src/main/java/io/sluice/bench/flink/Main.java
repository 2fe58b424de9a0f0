package io.sluice.bench.flink;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * The Flink SQL side of Sluice's benchmarks (see ../../../../../../README.md): one workload as
 * Flink SQL over the Kafka connector, run in a local MiniCluster inside this JVM.
 *
 * <pre>
 * run &lt;q0|q1|q2|agg|agg-late|session|join&gt; --brokers ADDR --in TOPIC --out TOPIC --app-id ID [--table TOPIC] [--parallelism N] [--checkpoint-ms MS]
 * run nx-&lt;query&gt; --brokers ADDR --in BIDS --persons TOPIC --auctions TOPIC --out TOPIC --app-id ID
 * run cdc-read --brokers ADDR --topic TOPIC --columns COLUMNS [--key COLUMNS] [--query SQL] (CdcRead)
 * </pre>
 */
public final class Main {
    /**
     * Watermark delay of the window aggregations (agg, agg-late, session): the same 2 s that
     * Sluice's and Kafka Streams' windows allow as grace.
     */
    static final String WATERMARK_DELAY = "INTERVAL '2' SECOND";

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            usage("no workload");
        }
        String workload = args[0];
        if (workload.equals("cdc-read")) {
            // Not a benchmark: a bounded read of a topic of Debezium change events (CdcRead).
            CdcRead.run(args);
            return;
        }
        String brokers = null, in = null, out = null, appId = null, table = null, persons = null, auctions = null;
        int parallelism = 0;
        long checkpointMs = 1000;
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                usage("missing value for " + a);
            }
            String v = args[++i];
            switch (a) {
                case "--brokers" -> brokers = v;
                case "--in" -> in = v;
                case "--out" -> out = v;
                case "--app-id" -> appId = v;
                case "--table" -> table = v;
                case "--persons" -> persons = v;
                case "--auctions" -> auctions = v;
                case "--parallelism" -> parallelism = Integer.parseInt(v);
                case "--checkpoint-ms" -> checkpointMs = Long.parseLong(v);
                case "--state-dir" -> { } // accepted like the Kafka Streams contender's; unused
                default -> usage("unknown flag " + a);
            }
        }
        if (brokers == null || in == null || out == null || appId == null) {
            usage("--brokers, --in, --out and --app-id are required");
        }
        if (parallelism <= 0) {
            parallelism = partitions(brokers, in);
        }

        Path ckDir = Files.createTempDirectory("flink-bench-ck-");
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", Integer.toString(parallelism));
        conf.setString("table.local-time-zone", "UTC");
        conf.setString("state.backend.type", "hashmap");
        conf.setString("pipeline.name", "sluice-bench-" + workload + "-" + appId);
        // The aggregations run exactly-once, as Sluice's (processing.guarantee=exactly_once) and
        // Kafka Streams' (exactly_once_v2) do; the stateless queries and the join at least once.
        boolean eos = switch (workload) {
            case "agg", "agg-late", "session" -> true;
            default -> false;
        };
        if (workload.equals("join") && table == null) {
            usage("join needs --table");
        }
        if (eos) {
            conf.setString("execution.checkpointing.interval", checkpointMs + " ms");
            conf.setString("execution.checkpointing.mode", "EXACTLY_ONCE");
            conf.setString("execution.checkpointing.storage", "filesystem");
            conf.setString("execution.checkpointing.dir", ckDir.toUri().toString());
        }
        TableEnvironment tenv = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());

        if (workload.startsWith("nx-")) {
            // The Nexmark suite (issue 35): the reference query text over person, auction, bid.
            if (persons == null || auctions == null) {
                usage(workload + " needs --persons and --auctions");
            }
            awaitRunning(Nexmark.insert(tenv, workload.substring(3), brokers, persons, auctions, in, out, appId), ckDir);
            return;
        }

        // The window aggregations' watermark lags by the grace. The join's bids are in event-time
        // order per partition, so its watermark is the bids' time itself: the temporal join emits a
        // bid once both sides' watermarks have passed it.
        String watermark = eos ? ",\n  WATERMARK FOR ts AS ts - " + WATERMARK_DELAY
                : workload.equals("join") ? ",\n  WATERMARK FOR ts AS ts" : "";
        tenv.executeSql("CREATE TABLE bids (\n"
                + "  k STRING,\n"
                + "  auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,\n"
                + "  `dateTime` BIGINT, extra STRING,\n"
                + "  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL" + watermark + "\n"
                + ") WITH (\n"
                + kafka(brokers, in)
                + "  'properties.group.id' = '" + appId + "',\n"
                + "  'scan.startup.mode' = 'earliest-offset'\n"
                + ")");

        String sinkCols, select;
        switch (workload) {
            case "q0" -> {
                sinkCols = "k STRING, auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING, `dateTime` BIGINT, extra STRING";
                select = "SELECT k, auction, bidder, price, channel, url, `dateTime`, extra FROM bids";
            }
            case "q1" -> {
                sinkCols = "k STRING, auction BIGINT, bidder BIGINT, price DOUBLE, `dateTime` BIGINT";
                select = "SELECT k, auction, bidder, CAST(price AS DOUBLE) * 0.908 AS price, `dateTime` FROM bids";
            }
            case "q2" -> {
                sinkCols = "k STRING, auction BIGINT, price BIGINT";
                select = "SELECT k, auction, price FROM bids WHERE MOD(auction, 123) = 0";
            }
            case "agg", "agg-late" -> {
                // agg-late is agg over the copy of the bids in which 15% are late by less than
                // the watermark's delay: every bid still counts.
                sinkCols = "k STRING, n BIGINT, total BIGINT";
                select = "SELECT CONCAT(k, '@', CAST(window_start AS STRING)) AS k, COUNT(*) AS n, SUM(price) AS total\n"
                        + "FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))\n"
                        + "GROUP BY k, window_start, window_end";
            }
            case "session" -> {
                // A count per bidder (the input's key) over session windows with a 2 s gap.
                sinkCols = "k STRING, n BIGINT";
                select = "SELECT CONCAT(k, '@', CAST(window_start AS STRING)) AS k, COUNT(*) AS n\n"
                        + "FROM TABLE(SESSION(TABLE bids PARTITION BY k, DESCRIPTOR(ts), INTERVAL '2' SECOND))\n"
                        + "GROUP BY k, window_start, window_end";
            }
            case "join" -> {
                // The stream-table join as Flink SQL writes it: an event-time temporal join against
                // the auctions as a versioned table (upsert-kafka, keyed by auction id), each bid
                // with the auction's version at the bid's time.
                tenv.executeSql("CREATE TABLE auctions (\n"
                        + "  k STRING,\n"
                        + "  id BIGINT, seller BIGINT, category BIGINT,\n"
                        + "  ts TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n"
                        + "  PRIMARY KEY (k) NOT ENFORCED,\n"
                        + "  WATERMARK FOR ts AS ts\n"
                        + ") WITH (\n"
                        + "  'connector' = 'upsert-kafka',\n"
                        + "  'topic' = '" + table + "',\n"
                        + "  'properties.bootstrap.servers' = '" + brokers + "',\n"
                        + "  'properties.group.id' = '" + appId + "-auctions',\n"
                        + "  'key.format' = 'raw',\n"
                        + "  'value.format' = 'json',\n"
                        + "  'value.fields-include' = 'EXCEPT_KEY'\n"
                        + ")");
                sinkCols = "k STRING, auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` BIGINT, seller BIGINT, category BIGINT";
                select = "SELECT b.k, b.auction, b.bidder, b.price, b.`dateTime`, a.seller, a.category\n"
                        + "FROM bids AS b LEFT JOIN auctions FOR SYSTEM_TIME AS OF b.ts AS a ON b.k = a.k";
            }
            default -> {
                usage("unknown workload " + workload);
                return;
            }
        }
        String guarantee = eos
                ? "  'sink.delivery-guarantee' = 'exactly-once',\n"
                        + "  'sink.transactional-id-prefix' = '" + appId + "',\n"
                        // The broker refuses a transaction timeout above its transaction.max.timeout.ms
                        // (15 min by default); Flink's default is 1 h.
                        + "  'properties.transaction.timeout.ms' = '60000'\n"
                : "  'sink.delivery-guarantee' = 'at-least-once'\n";
        tenv.executeSql("CREATE TABLE sink (" + sinkCols + ") WITH (\n" + kafka(brokers, out) + guarantee + ")");

        awaitRunning(tenv.executeSql("INSERT INTO sink " + select), ckDir);
    }

    /**
     * Cancels the job on SIGTERM, prints when it runs (RUNNING epoch-ms, the one line of stdout)
     * and waits for it to end.
     */
    static void awaitRunning(TableResult res, Path ckDir) throws Exception {
        JobClient job = res.getJobClient().orElseThrow();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                job.cancel().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                // already finished, or the cluster is going down anyway
            }
            deleteTree(ckDir);
            // Exit 0 after SIGTERM (the JVM's own status would be 143).
            Runtime.getRuntime().halt(0);
        }));
        // Stdout's one line: when the job runs (epoch ms), for the harness to time F-agg from,
        // as its output comes in bursts (final windows, committed per checkpoint).
        while (job.getJobStatus().get() != JobStatus.RUNNING) {
            if (job.getJobStatus().get().isGloballyTerminalState()) {
                break;
            }
            Thread.sleep(5);
        }
        System.out.println("RUNNING " + System.currentTimeMillis());
        System.out.flush();
        job.getJobExecutionResult().get();
        System.err.println("flink: job ended");
    }

    /** The Kafka connector options shared by source and sink: raw string key, JSON value. */
    static String kafka(String brokers, String topic) {
        return "  'connector' = 'kafka',\n"
                + "  'topic' = '" + topic + "',\n"
                + "  'properties.bootstrap.servers' = '" + brokers + "',\n"
                + "  'key.format' = 'raw',\n"
                + "  'key.fields' = 'k',\n"
                + "  'value.format' = 'json',\n"
                + "  'value.fields-include' = 'EXCEPT_KEY',\n";
    }

    /** The input topic's partition count (2 when it cannot be read). */
    static int partitions(String brokers, String topic) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        try (Admin adm = Admin.create(p)) {
            return adm.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                    .get(topic).partitions().size();
        } catch (Exception e) {
            System.err.println("flink: partitions of " + topic + ": " + e + "; parallelism 2");
            return 2;
        }
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }

    static void usage(String why) {
        System.err.println("flink: " + why + "\nusage: run <q0|q1|q2|agg|agg-late|session|join> --brokers ADDR --in TOPIC --out TOPIC --app-id ID [--table TOPIC] [--parallelism N] [--checkpoint-ms MS]\n       run nx-<query> --brokers ADDR --in BIDS --persons TOPIC --auctions TOPIC --out TOPIC --app-id ID\n       run cdc-read --brokers ADDR --topic TOPIC --columns COLUMNS [--key COLUMNS] [--query SQL] [--parallelism N]\n       run build");
        System.exit(2);
    }
}
