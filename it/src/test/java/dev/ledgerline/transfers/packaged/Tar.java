package dev.ledgerline.transfers.packaged;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough of the tar format for image layers: writing the stand-in base's layer (POSIX ustar) and reading the
 * layers a registry holds, as Jib writes them (ustar with PAX headers for long names). An entry's content is read into
 * memory, which suits layers of jars and libraries.
 */
final class Tar {

    static final char FILE = '0';
    static final char SYMLINK = '2';
    static final char DIRECTORY = '5';

    private static final int BLOCK = 512;

    /**
     * One entry: its path without a leading {@code /} (directories without a trailing one), type, permission bits,
     * owner, the target of a link, and a file's content.
     */
    record Entry(String path, char type, int mode, int uid, int gid, String linkTarget, byte[] content) {

        boolean isFile() {
            return type == FILE || type == '\0' || type == '7';
        }

        boolean isDirectory() {
            return type == DIRECTORY;
        }

        boolean isSymlink() {
            return type == SYMLINK;
        }
    }

    private Tar() {
    }

    /** Every entry of the (uncompressed) archive {@code in}, in order; PAX and GNU long-name headers applied. */
    static List<Entry> read(InputStream in) throws IOException {
        List<Entry> entries = new ArrayList<>();
        Map<String, String> pax = new HashMap<>();
        String gnuLongName = null;
        byte[] header = new byte[BLOCK];
        while (true) {
            if (!readFully(in, header)) {
                break;
            }
            if (isZero(header)) {
                break;
            }
            String name = string(header, 0, 100);
            int mode = (int) octal(header, 100, 8);
            int uid = (int) octal(header, 108, 8);
            int gid = (int) octal(header, 116, 8);
            long size = octal(header, 124, 12);
            char type = (char) header[156];
            String link = string(header, 157, 100);
            if ("ustar".equals(string(header, 257, 6).strip())) {
                String prefix = string(header, 345, 155);
                if (!prefix.isEmpty()) {
                    name = prefix + "/" + name;
                }
            }
            if (pax.containsKey("size")) {
                size = Long.parseLong(pax.get("size"));
            }
            byte[] content = readContent(in, size);
            switch (type) {
                case 'x' -> {
                    pax.putAll(paxRecords(content));
                    continue;
                }
                case 'g' -> {
                    continue;
                }
                case 'L' -> {
                    gnuLongName = new String(content, StandardCharsets.UTF_8).replace("\0", "");
                    continue;
                }
                default -> {
                }
            }
            if (gnuLongName != null) {
                name = gnuLongName;
            }
            name = pax.getOrDefault("path", name);
            link = pax.getOrDefault("linkpath", link);
            if (pax.containsKey("uid")) {
                uid = Integer.parseInt(pax.get("uid"));
            }
            if (pax.containsKey("gid")) {
                gid = Integer.parseInt(pax.get("gid"));
            }
            pax.clear();
            gnuLongName = null;
            String path = name.replaceFirst("^\\./", "").replaceFirst("^/+", "").replaceFirst("/+$", "");
            entries.add(new Entry(path, type, mode & 07777, uid, gid, link, content));
        }
        return entries;
    }

    /** Writes {@code entries} as a ustar archive, owned by root, dated {@code mtime}, with the end-of-archive blocks. */
    static void write(List<Entry> entries, long mtime, OutputStream out) throws IOException {
        for (Entry entry : entries) {
            byte[] header = new byte[BLOCK];
            String name = entry.isDirectory() ? entry.path() + "/" : entry.path();
            byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
            if (nameBytes.length > 100) {
                throw new IOException("a name this short tar writer cannot hold (over 100 bytes): " + name);
            }
            System.arraycopy(nameBytes, 0, header, 0, nameBytes.length);
            putOctal(header, 100, 8, entry.mode());
            putOctal(header, 108, 8, entry.uid());
            putOctal(header, 116, 8, entry.gid());
            long size = entry.isFile() ? entry.content().length : 0;
            putOctal(header, 124, 12, size);
            putOctal(header, 136, 12, mtime);
            header[156] = (byte) entry.type();
            if (entry.isSymlink()) {
                byte[] link = entry.linkTarget().getBytes(StandardCharsets.UTF_8);
                if (link.length > 100) {
                    throw new IOException("a link target over 100 bytes: " + entry.linkTarget());
                }
                System.arraycopy(link, 0, header, 157, link.length);
            }
            System.arraycopy("ustar\0".getBytes(StandardCharsets.US_ASCII), 0, header, 257, 6);
            header[263] = '0';
            header[264] = '0';
            System.arraycopy("root".getBytes(StandardCharsets.US_ASCII), 0, header, 265, 4);
            System.arraycopy("root".getBytes(StandardCharsets.US_ASCII), 0, header, 297, 4);
            for (int i = 148; i < 156; i++) {
                header[i] = ' ';
            }
            long sum = 0;
            for (byte b : header) {
                sum += b & 0xff;
            }
            byte[] checksum = String.format("%06o\0 ", sum).getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(checksum, 0, header, 148, 8);
            out.write(header);
            if (size > 0) {
                out.write(entry.content());
                int pad = (int) ((BLOCK - size % BLOCK) % BLOCK);
                out.write(new byte[pad]);
            }
        }
        out.write(new byte[2 * BLOCK]);
    }

    private static byte[] readContent(InputStream in, long size) throws IOException {
        if (size > Integer.MAX_VALUE - 16) {
            throw new IOException("an entry too large for this reader: " + size + " bytes");
        }
        byte[] content = new byte[(int) size];
        if (!readFully(in, content) && size > 0) {
            throw new EOFException("archive ends inside an entry");
        }
        long pad = (BLOCK - size % BLOCK) % BLOCK;
        in.readNBytes((int) pad);
        return content;
    }

    private static Map<String, String> paxRecords(byte[] content) {
        Map<String, String> records = new HashMap<>();
        int at = 0;
        while (at < content.length) {
            int space = at;
            while (space < content.length && content[space] != ' ') {
                space++;
            }
            if (space >= content.length) {
                break;
            }
            int length = Integer.parseInt(new String(content, at, space - at, StandardCharsets.US_ASCII));
            String record = new String(content, space + 1, length - (space + 1 - at) - 1, StandardCharsets.UTF_8);
            int equals = record.indexOf('=');
            records.put(record.substring(0, equals), record.substring(equals + 1));
            at += length;
        }
        return records;
    }

    private static boolean readFully(InputStream in, byte[] into) throws IOException {
        int read = in.readNBytes(into, 0, into.length);
        if (read == 0 && into.length > 0) {
            return false;
        }
        if (read < into.length) {
            throw new EOFException("archive ends inside a block");
        }
        return true;
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    private static String string(byte[] header, int offset, int length) {
        int end = offset;
        while (end < offset + length && header[end] != 0) {
            end++;
        }
        return new String(header, offset, end - offset, StandardCharsets.UTF_8);
    }

    private static long octal(byte[] header, int offset, int length) {
        String text = string(header, offset, length).strip();
        return text.isEmpty() ? 0 : Long.parseLong(text, 8);
    }

    private static void putOctal(byte[] header, int offset, int length, long value) {
        String text = String.format("%0" + (length - 1) + "o", value);
        byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(bytes, 0, header, offset, length - 1);
        header[offset + length - 1] = 0;
    }

    /** The bytes of {@code entries} as an archive, for a layer small enough to hold in memory. */
    static byte[] bytes(List<Entry> entries, long mtime) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        write(entries, mtime, out);
        return out.toByteArray();
    }
}
