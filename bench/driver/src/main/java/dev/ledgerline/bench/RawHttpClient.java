package dev.ledgerline.bench;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal HTTP/1.1 client for the load generator: up to N keep-alive connections, one request at a time on each
 * (no pipelining), requests beyond them wait in one FIFO queue. Requests are written as ready-made bytes; answers
 * are read only as far as the driver needs (status, whether {@code Idempotent-Replayed} is present, and the body's
 * length, fixed or chunked, to find the next answer). Everything runs on the one event loop that created it.
 *
 * <p>Why not Vert.x's HttpClient: per request it builds header maps, futures and a request object, and that cost
 * sits on the same 2 cores as the service being measured.
 */
final class RawHttpClient {

    /** An answer's outcome: status 0 means the connection failed or timed out before a full answer. */
    interface Callback {
        void done(int status, boolean replayed, Throwable failure);
    }

    private record Pending(Buffer request, Callback callback) {
    }

    private final Vertx vertx;
    private final NetClient net;
    private final String host;
    private final int port;
    private final int maxConnections;
    private final long timeoutMs;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private final List<Connection> all = new ArrayList<>();
    private int connecting;

    RawHttpClient(Vertx vertx, String host, int port, int maxConnections, long timeoutMs) {
        this.vertx = vertx;
        this.net = vertx.createNetClient(new NetClientOptions().setTcpNoDelay(true).setConnectTimeout(5000));
        this.host = host;
        this.port = port;
        this.maxConnections = maxConnections;
        this.timeoutMs = timeoutMs;
    }

    void send(Buffer request, Callback callback) {
        Connection c = idle.pollFirst();
        if (c != null) {
            c.start(new Pending(request, callback));
            return;
        }
        queue.addLast(new Pending(request, callback));
        if (all.size() + connecting < maxConnections && connecting < queue.size()) {
            connect();
        }
    }

    private void connect() {
        connecting++;
        net.connect(port, host).onComplete(ar -> {
            connecting--;
            if (ar.failed()) {
                Pending p = queue.pollFirst();
                if (p != null) {
                    p.callback.done(0, false, ar.cause());
                }
                return;
            }
            Connection c = new Connection(ar.result());
            all.add(c);
            c.free();
        });
    }

    private final class Connection {
        private final NetSocket socket;
        private Buffer in = Buffer.buffer();
        private int pos;
        private Pending current;
        private long timer = -1;
        // the answer being read
        private int status;
        private boolean replayed;
        private boolean headersDone;
        private long bodyLeft;      // fixed length: bytes left; chunked: bytes left in this chunk
        private boolean chunked;
        private boolean chunkTrailer; // after the 0-size chunk: waiting for the final CRLF

        Connection(NetSocket socket) {
            this.socket = socket;
            socket.handler(this::read);
            socket.closeHandler(ignored -> closed(new IllegalStateException("connection closed")));
            socket.exceptionHandler(this::closed);
        }

        void start(Pending p) {
            current = p;
            status = 0;
            replayed = false;
            headersDone = false;
            chunked = false;
            chunkTrailer = false;
            bodyLeft = 0;
            timer = vertx.setTimer(timeoutMs, t -> {
                timer = -1;
                socket.close();
            });
            socket.write(p.request);
        }

        void free() {
            Pending next = queue.pollFirst();
            if (next != null) {
                start(next);
            } else {
                idle.addLast(this);
            }
        }

        private void closed(Throwable cause) {
            if (!all.remove(this)) {
                return;
            }
            idle.remove(this);
            if (timer >= 0) {
                vertx.cancelTimer(timer);
            }
            Pending p = current;
            current = null;
            if (p != null) {
                p.callback.done(0, false, cause);
            }
            if (!queue.isEmpty() && all.size() + connecting < maxConnections) {
                connect();
            }
        }

        private void read(Buffer data) {
            in = pos < in.length() ? in.getBuffer(pos, in.length()).appendBuffer(data) : data;
            pos = 0;
            while (current != null && parse()) {
                Pending p = current;
                current = null;
                if (timer >= 0) {
                    vertx.cancelTimer(timer);
                    timer = -1;
                }
                p.callback.done(status, replayed, null);
                free();
            }
        }

        /** true when a whole answer has been read */
        private boolean parse() {
            if (!headersDone) {
                int end = indexOf(in, pos, "\r\n\r\n");
                if (end < 0) {
                    return false;
                }
                String head = in.getString(pos, end, "ISO-8859-1");
                pos = end + 4;
                headersDone = true;
                int sp = head.indexOf(' ');
                status = Integer.parseInt(head.substring(sp + 1, sp + 4));
                for (String line : head.split("\r\n")) {
                    int colon = line.indexOf(':');
                    if (colon < 0) {
                        continue;
                    }
                    String name = line.substring(0, colon).trim();
                    if (name.equalsIgnoreCase("content-length")) {
                        bodyLeft = Long.parseLong(line.substring(colon + 1).trim());
                    } else if (name.equalsIgnoreCase("transfer-encoding") && line.toLowerCase().contains("chunked")) {
                        chunked = true;
                    } else if (name.equalsIgnoreCase("idempotent-replayed")) {
                        replayed = true;
                    }
                }
                if (chunked) {
                    bodyLeft = -1; // a chunk-size line comes next
                }
            }
            if (!chunked) {
                long take = Math.min(bodyLeft, in.length() - pos);
                pos += (int) take;
                bodyLeft -= take;
                return bodyLeft == 0;
            }
            while (true) {
                if (chunkTrailer) {
                    int end = indexOf(in, pos, "\r\n");
                    if (end < 0) {
                        return false;
                    }
                    boolean last = end == pos;
                    pos = end + 2;
                    if (last) {
                        return true;
                    }
                    continue; // a trailer header line
                }
                if (bodyLeft < 0) {
                    int end = indexOf(in, pos, "\r\n");
                    if (end < 0) {
                        return false;
                    }
                    String size = in.getString(pos, end, "ISO-8859-1");
                    int semi = size.indexOf(';');
                    long n = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
                    pos = end + 2;
                    if (n == 0) {
                        chunkTrailer = true;
                        continue;
                    }
                    bodyLeft = n + 2; // the chunk and its CRLF
                }
                long take = Math.min(bodyLeft, in.length() - pos);
                pos += (int) take;
                bodyLeft -= take;
                if (bodyLeft > 0) {
                    return false;
                }
                bodyLeft = -1;
            }
        }
    }

    private static int indexOf(Buffer b, int from, String crlf) {
        int n = crlf.length();
        outer:
        for (int i = from; i <= b.length() - n; i++) {
            for (int j = 0; j < n; j++) {
                if (b.getByte(i + j) != crlf.charAt(j)) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
