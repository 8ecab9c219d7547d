package dev.ledgerline.transfers.packaged;

import dev.ledgerline.transfers.packaged.BlockedThreadReports.Report;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What {@link NoBlockedEventLoopIT} fails on, fed reports in the shape Vert.x writes them: a wait of 100 ms or
 * more fails whatever its length, a thread caught running fails only from 2 s on.
 */
class BlockedThreadReportsTest {

    private static List<String> report(long ms, String... frames) {
        List<String> lines = new ArrayList<>();
        lines.add("2026-12-01 04:10:31,745 WARN  [io.ver.cor.imp.BlockedThreadChecker] (vertx-blocked-thread-checker)"
                + " Thread Thread[vert.x-eventloop-thread-0,5,main] has been blocked for " + ms
                + " ms, time limit is 100 ms: io.vertx.core.VertxException: Thread blocked");
        for (String frame : frames) {
            lines.add("\tat " + frame);
        }
        lines.add("2026-12-01 04:10:31,800 INFO  [dev.led.tra] (executor-thread-1) the next line of the log");
        return lines;
    }

    private static Report only(List<String> lines) {
        List<Report> reports = BlockedThreadReports.parse(lines);
        assertEquals(1, reports.size(), "one report in " + lines);
        return reports.get(0);
    }

    @Test
    void aSleepOnTheEventLoopIsABugAt100Ms() {
        Report sleep = only(report(133, "java.base@17.0.15/java.lang.Thread.sleep(Native Method)",
                "dev.ledgerline.transfers.api.TransferResource.get(TransferResource.java:171)"));
        assertTrue(sleep.waiting(), sleep.text());
        assertTrue(sleep.isBug());
        assertEquals(133, sleep.blockedMs());
        assertTrue(sleep.text().contains("TransferResource.get"), "the report names where it blocked");
    }

    @Test
    void aParkABlockingReadAndAFutureGetAreWaits() {
        assertTrue(only(report(150, "java.base@17.0.15/jdk.internal.misc.Unsafe.park(Native Method)",
                "java.base@17.0.15/java.util.concurrent.locks.LockSupport.park(LockSupport.java:211)",
                "java.base@17.0.15/java.util.concurrent.CompletableFuture.waitingGet(CompletableFuture.java:1864)",
                "io.smallrye.mutiny.operators.uni.UniBlockingAwait.await(UniBlockingAwait.java:60)")).isBug());
        assertTrue(only(report(120, "java.base@17.0.15/sun.nio.ch.Net.poll(Native Method)",
                "java.base@17.0.15/sun.nio.ch.NioSocketImpl.park(NioSocketImpl.java:186)",
                "java.base@17.0.15/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:290)",
                "java.base@17.0.15/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:314)")).isBug(),
                "a java.net.Socket waiting for bytes");
        assertTrue(only(report(101, "java.base@17.0.15/java.lang.Object.wait(Native Method)")).isBug());
    }

    @Test
    void aThreadCaughtRunningIsReportedButFailsOnlyFrom2Seconds() {
        Report classLoading = only(report(1_952,
                "app//io.quarkus.bootstrap.classloading.QuarkusClassLoader.loadClass(QuarkusClassLoader.java:545)",
                "io.netty.channel.DefaultChannelPipeline.<init>(DefaultChannelPipeline.java:93)"));
        assertFalse(classLoading.waiting());
        assertFalse(classLoading.isBug(), "slow first-use work under load is reported, not failed, below 2 s");
        Report hog = only(report(2_100, "java.base@17.0.15/java.util.zip.Inflater.inflateBytesBytes(Native Method)"));
        assertTrue(hog.isBug(), "anything that holds an event loop for 2 s fails");
    }

    @Test
    void nettysNonBlockingReadIsNotAWait() {
        // seen in a loaded CI run: the event loop reading bytes that had arrived, caught mid-read by a starved machine
        Report read = only(report(116, "java.base@17.0.15/sun.nio.ch.SocketDispatcher.read0(Native Method)",
                "java.base@17.0.15/sun.nio.ch.SocketDispatcher.read(SocketDispatcher.java:47)",
                "java.base@17.0.15/sun.nio.ch.IOUtil.readIntoNativeBuffer(IOUtil.java:330)",
                "java.base@17.0.15/sun.nio.ch.IOUtil.read(IOUtil.java:284)",
                "java.base@17.0.15/sun.nio.ch.SocketChannelImpl.read(SocketChannelImpl.java:417)",
                "io.netty.buffer.PooledByteBuf.setBytes(PooledByteBuf.java:255)"));
        assertFalse(read.waiting(), "a non-blocking channel read returns at once: running, not waiting");
        assertFalse(read.isBug());
    }

    @Test
    void nettysNonBlockingConnectIsNotAWait() {
        // seen in a loaded CI run: a Netty channel starting a connect, which returns at once on a non-blocking channel
        Report connect = only(report(120, "java.base@17.0.15/sun.nio.ch.Net.connect0(Native Method)",
                "java.base@17.0.15/sun.nio.ch.Net.connect(Net.java:579)",
                "java.base@17.0.15/sun.nio.ch.Net.connect(Net.java:586)",
                "java.base@17.0.15/sun.nio.ch.SocketChannelImpl.connect(SocketChannelImpl.java:853)",
                "io.netty.util.internal.SocketUtils$3.run(SocketUtils.java:91)"));
        assertFalse(connect.waiting(), "a non-blocking channel connect returns at once: running, not waiting");
        assertFalse(connect.isBug());
        Report socket = only(report(101, "java.base@17.0.15/sun.nio.ch.Net.connect0(Native Method)",
                "java.base@17.0.15/sun.nio.ch.Net.connect(Net.java:579)",
                "java.base@17.0.15/sun.nio.ch.Net.connect(Net.java:568)",
                "java.base@17.0.15/sun.nio.ch.NioSocketImpl.connect(NioSocketImpl.java:593)",
                "java.base@17.0.15/java.net.SocksSocketImpl.connect(SocksSocketImpl.java:327)",
                "java.base@17.0.15/java.net.Socket.connect(Socket.java:633)"));
        assertTrue(socket.isBug(), "a java.net.Socket connecting without a timeout blocks until connected");
    }

    @Test
    void anIdleSelectorIsNotAWait() {
        Report idle = only(report(147, "java.base@17.0.15/sun.nio.ch.EPoll.wait(Native Method)",
                "java.base@17.0.15/sun.nio.ch.EPollSelectorImpl.doSelect(EPollSelectorImpl.java:118)"));
        assertFalse(idle.waiting(), "an event loop waiting for events is idle, not blocked");
        assertFalse(idle.isBug());
    }

    @Test
    void aWaitDeepUnderRunningCodeIsNotMistakenForTheTopFrame() {
        Report deep = only(report(300, "a.B.c(B.java:1)", "a.B.d(B.java:2)", "a.B.e(B.java:3)", "a.B.f(B.java:4)",
                "java.base@17.0.15/java.lang.Thread.sleep(Native Method)"));
        assertFalse(deep.waiting(), "only the top frames tell what the thread was doing when Vert.x looked");
    }

    @Test
    void twoReportsAreReadApart() {
        List<String> lines = new ArrayList<>(report(133, "java.base@17.0.15/java.lang.Thread.sleep(Native Method)"));
        lines.addAll(report(140, "io.netty.channel.AbstractChannel.<init>(AbstractChannel.java:74)"));
        List<Report> reports = BlockedThreadReports.parse(lines);
        assertEquals(2, reports.size());
        assertTrue(reports.get(0).isBug());
        assertFalse(reports.get(1).isBug());
    }
}
