package dev.ledgerline.transfers.support;

import dev.ledgerline.devstack.LocalRedis;
import org.awaitility.Awaitility;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.Protocol;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A real Redis Cluster on loopback, owned by the test JVM: three masters with one replica each, every node
 * the same embedded Redis binary the rest of the suite runs ({@link LocalRedis}), joined with
 * {@code CLUSTER MEET}, slots assigned with {@code CLUSTER ADDSLOTS} and replicas attached with
 * {@code CLUSTER REPLICATE}. Tests reach it through node ports only (the commands go over the wire with the
 * Jedis client that ships with the embedded server), so every class loader sees the same cluster: the first
 * {@link #shared()} starts it and publishes its ports as a system property, later calls attach to them.
 */
public final class LocalRedisCluster {

    private static final String PORTS = "redis-cluster-test.ports";
    private static final Duration NODE_TIMEOUT = Duration.ofMillis(2000);
    private static final Duration FORMING = Duration.ofSeconds(60);

    private final List<Integer> ports;

    private LocalRedisCluster(List<Integer> ports) {
        this.ports = ports;
    }

    /** The cluster of this JVM, started on first use and stopped when the JVM exits. */
    public static synchronized LocalRedisCluster shared() {
        String published = System.getProperty(PORTS);
        if (published != null) {
            return new LocalRedisCluster(Arrays.stream(published.split(",")).map(Integer::valueOf).toList());
        }
        List<LocalRedis> nodes = new ArrayList<>();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> nodes.forEach(LocalRedis::close), "redis-cluster-stop"));
        try {
            for (int i = 0; i < 6; i++) {
                nodes.add(LocalRedis.startClusterNode(NODE_TIMEOUT));
            }
        } catch (IOException e) {
            nodes.forEach(LocalRedis::close);
            throw new UncheckedIOException("Could not start the Redis Cluster nodes", e);
        }
        LocalRedisCluster cluster = new LocalRedisCluster(nodes.stream().map(LocalRedis::port).toList());
        cluster.form();
        System.setProperty(PORTS, cluster.ports.stream().map(String::valueOf).collect(Collectors.joining(",")));
        return cluster;
    }

    /** Nodes 0–2 take a third of the 16,384 slots each; nodes 3–5 replicate them in that order. */
    private void form() {
        int first = ports.get(0);
        for (int port : ports.subList(1, ports.size())) {
            onNode(port, jedis -> jedis.clusterMeet("127.0.0.1", first));
        }
        int[][] ranges = {{0, 5460}, {5461, 10922}, {10923, 16383}};
        for (int m = 0; m < 3; m++) {
            int[] slots = new int[ranges[m][1] - ranges[m][0] + 1];
            for (int s = 0; s < slots.length; s++) {
                slots[s] = ranges[m][0] + s;
            }
            onNode(ports.get(m), jedis -> jedis.clusterAddSlots(slots));
        }
        for (int r = 0; r < 3; r++) {
            String masterId = onNode(ports.get(r), Jedis::clusterMyId);
            int replica = ports.get(r + 3);
            // a replica can only follow a node it has already learned about through the gossip MEET started
            Awaitility.await("node :" + replica + " knows its master").atMost(FORMING).pollInterval(Duration.ofMillis(100))
                    .until(() -> onNode(replica, Jedis::clusterNodes).contains(masterId));
            onNode(replica, jedis -> jedis.clusterReplicate(masterId));
        }
        awaitHealthy();
    }

    /** Every node sees state ok and every master has one replica in sync. */
    public void awaitHealthy() {
        Awaitility.await("the Redis Cluster is ok with a synced replica per master").atMost(FORMING)
                .pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> ports.stream().allMatch(p -> onNode(p, Jedis::clusterInfo).contains("cluster_state:ok"))
                        && masters().size() == 3
                        && masters().stream().allMatch(m -> onNode(m, j -> j.info("replication")).contains("connected_slaves:1"))
                        && replicas().stream().allMatch(r -> onNode(r, j -> j.info("replication")).contains("master_link_status:up")));
    }

    /** The addresses for {@code quarkus.redis.hosts}: every node, so the client can discover the cluster from any. */
    public String hosts() {
        return ports.stream().map(p -> "redis://127.0.0.1:" + p).collect(Collectors.joining(","));
    }

    /** Ports of the nodes that are masters right now. */
    public List<Integer> masters() {
        return ports.stream().filter(p -> onNode(p, j -> j.info("replication")).contains("role:master")).toList();
    }

    /** Ports of the nodes that are replicas right now. */
    public List<Integer> replicas() {
        return ports.stream().filter(p -> onNode(p, j -> j.info("replication")).contains("role:slave")).toList();
    }

    /** The port of the replica that follows the given master. */
    public int replicaOf(int masterPort) {
        String masterId = onNode(masterPort, Jedis::clusterMyId);
        for (int replica : replicas()) {
            for (String line : onNode(replica, Jedis::clusterNodes).split("\n")) {
                if (line.contains("myself") && line.contains(masterId)) {
                    return replica;
                }
            }
        }
        throw new IllegalStateException("no replica follows :" + masterPort);
    }

    /** The port of the master that serves this key's slot. */
    public int masterFor(String key) {
        long slot = onNode(ports.get(0), j -> j.clusterKeySlot(key));
        for (int master : masters()) {
            for (String line : onNode(master, Jedis::clusterNodes).split("\n")) {
                if (!line.contains("myself")) {
                    continue;
                }
                String[] fields = line.split(" ");
                for (int f = 8; f < fields.length; f++) {
                    String[] range = fields[f].split("-");
                    long from = Long.parseLong(range[0]);
                    long to = range.length > 1 ? Long.parseLong(range[1]) : from;
                    if (slot >= from && slot <= to) {
                        return master;
                    }
                }
            }
        }
        throw new IllegalStateException("no master serves slot " + slot);
    }

    /**
     * {@code CLUSTER FAILOVER} on the replica: it takes over its master's slots after a handshake that loses
     * no acknowledged write, and the old master becomes its replica. Waits until the cluster agrees.
     */
    public void failOver(int replicaPort) {
        onNode(replicaPort, j -> j.sendCommand(Protocol.Command.CLUSTER, "FAILOVER"));
        Awaitility.await("node :" + replicaPort + " is master").atMost(FORMING).pollInterval(Duration.ofMillis(100))
                .until(() -> onNode(replicaPort, j -> j.info("replication")).contains("role:master"));
        awaitHealthy();
    }

    /**
     * Kills the master (SIGKILL: whatever it had not passed on to its replica is lost), waits until the
     * cluster promotes its replica on its own, then starts the node again on its port and directory so it
     * rejoins as a replica, and waits until the cluster is whole.
     */
    public void killAndRejoin(int masterPort) {
        int replica = replicaOf(masterPort);
        String dir = onNode(masterPort, j -> j.configGet("dir").get(1));
        long pid = Long.parseLong(onNode(masterPort, j -> j.info("server")).lines()
                .filter(l -> l.startsWith("process_id:")).findFirst().orElseThrow().substring("process_id:".length()).trim());
        try {
            dev.ledgerline.devstack.Signals.send("KILL", pid);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Awaitility.await("the cluster promotes :" + replica).atMost(FORMING).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> onNode(replica, j -> j.info("replication")).contains("role:master")
                        && onNode(replica, Jedis::clusterInfo).contains("cluster_state:ok"));
        Awaitility.await("the killed node's port is free").atMost(FORMING).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    try (java.net.Socket probe = new java.net.Socket("127.0.0.1", masterPort)) {
                        return false;
                    } catch (IOException refused) {
                        return true;
                    }
                });
        try {
            LocalRedis restarted = LocalRedis.restartClusterNode(masterPort, java.nio.file.Path.of(dir), NODE_TIMEOUT);
            Runtime.getRuntime().addShutdownHook(new Thread(restarted::close, "redis-cluster-node-stop"));
        } catch (IOException e) {
            throw new UncheckedIOException("Could not restart the killed node :" + masterPort, e);
        }
        awaitHealthy();
    }

    /** A client that follows the cluster's redirections, for reading what the service wrote. */
    public JedisCluster client() {
        Set<HostAndPort> nodes = new HashSet<>();
        ports.forEach(p -> nodes.add(new HostAndPort("127.0.0.1", p)));
        return new JedisCluster(nodes, 2000);
    }

    /** Stops every node ({@code SHUTDOWN NOSAVE}); the JVM's exit would too. */
    public void stop() {
        System.clearProperty(PORTS);
        for (int port : ports) {
            try (Jedis jedis = new Jedis("127.0.0.1", port)) {
                jedis.sendCommand(Protocol.Command.SHUTDOWN, "NOSAVE");
            } catch (RuntimeException alreadyGone) {
                // SHUTDOWN closes the connection instead of answering
            }
        }
    }

    private static <T> T onNode(int port, java.util.function.Function<Jedis, T> command) {
        try (Jedis jedis = new Jedis("127.0.0.1", port)) {
            return command.apply(jedis);
        }
    }
}
