package dev.ledgerline.transfers.packaged;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Image layers as tar archives, through Commons Compress (which the embedded PostgreSQL's launcher already brings):
 * writing the stand-in base's layer, and reading the layers a registry holds as Jib writes them (ustar with PAX
 * headers for long names). An entry's content is read into memory, which suits layers of jars and libraries.
 */
final class Tar {

    static final char FILE = (char) TarConstants.LF_NORMAL;
    static final char SYMLINK = (char) TarConstants.LF_SYMLINK;
    static final char DIRECTORY = (char) TarConstants.LF_DIR;

    /**
     * One entry: its path without a leading {@code /} (directories without a trailing one), type, permission bits,
     * owner, the target of a link, and a file's content.
     */
    record Entry(String path, char type, int mode, int uid, int gid, String linkTarget, byte[] content) {

        boolean isFile() {
            return type == FILE || type == TarConstants.LF_OLDNORM || type == TarConstants.LF_CONTIG;
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
        TarArchiveInputStream tar = new TarArchiveInputStream(in);
        for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
            String path = entry.getName().replaceFirst("^\\./", "").replaceFirst("^/+", "").replaceFirst("/+$", "");
            entries.add(new Entry(path, (char) entry.getLinkFlag(), entry.getMode() & 07777, (int) entry.getLongUserId(),
                    (int) entry.getLongGroupId(), entry.getLinkName(), tar.readAllBytes()));
        }
        return entries;
    }

    /** Writes {@code entries} as a tar archive, owned by root, dated {@code mtime} (seconds), with its end blocks. */
    static void write(List<Entry> entries, long mtime, OutputStream out) throws IOException {
        TarArchiveOutputStream tar = new TarArchiveOutputStream(out);
        tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
        for (Entry entry : entries) {
            TarArchiveEntry header = new TarArchiveEntry(entry.isDirectory() ? entry.path() + "/" : entry.path(),
                    (byte) entry.type());
            header.setMode(entry.mode());
            header.setIds(entry.uid(), entry.gid());
            header.setNames("root", "root");
            header.setModTime(mtime * 1000);
            if (entry.isSymlink()) {
                header.setLinkName(entry.linkTarget());
            }
            header.setSize(entry.isFile() ? entry.content().length : 0);
            tar.putArchiveEntry(header);
            if (entry.isFile()) {
                tar.write(entry.content());
            }
            tar.closeArchiveEntry();
        }
        // the end-of-archive blocks, leaving the caller's stream open
        tar.finish();
    }
}
