package cdc.spark.fs;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system without a process started per file. Without Hadoop's native library (which Spark
 * does not ship), {@link RawLocalFileSystem} runs {@code chmod} for every file it creates with a permission and
 * {@code readlink} twice for every rename through {@code FileContext} (Delta's commits, Spark's streaming
 * checkpoints): about a hundred processes for a small batch of three Delta tables. Both are answered here through
 * {@code java.nio}, with the same results; what nio cannot express (a sticky bit, a path that is a link) is left to
 * Hadoop's own code.
 */
public class NoShellRawLocalFileSystem extends RawLocalFileSystem {
  private static final PosixFilePermission[] BITS = {
    PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_READ,
    PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
    PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_READ,
  };

  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    if (permission.getStickyBit()) {
      super.setPermission(p, permission);
      return;
    }
    File file = pathToFile(p);
    try {
      Files.setPosixFilePermissions(file.toPath(), posix(permission.toShort()));
    } catch (NoSuchFileException e) {
      throw new FileNotFoundException("File " + p + " does not exist");
    } catch (UnsupportedOperationException e) {
      super.setPermission(p, permission); // not a POSIX file system: Hadoop's way
    }
  }

  /** The nine permission bits of {@code mode} as nio's set. */
  static Set<PosixFilePermission> posix(int mode) {
    Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
    for (int bit = 0; bit < BITS.length; bit++) {
      if ((mode & (1 << bit)) != 0) {
        bits.add(BITS[bit]);
      }
    }
    return bits;
  }

  /**
   * Hadoop looks the link up by {@code new File(path.toString())}, which for a qualified path ({@code file:/...})
   * names no file, so it finds no link and answers the path's status; the same lookup is made here without a
   * process, and a path that is a link is left to Hadoop.
   */
  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (Files.isSymbolicLink(new File(f.toString()).toPath())) {
      return super.getFileLinkStatus(f);
    }
    return getFileStatus(f);
  }
}
