package cdc.spark.fs;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The {@code file:} scheme's {@code FileSystem} ({@code fs.file.impl}): Hadoop's checksummed local file system over
 * {@link NoShellRawLocalFileSystem}.
 */
public class NoShellLocalFileSystem extends LocalFileSystem {
  public NoShellLocalFileSystem() {
    super(new NoShellRawLocalFileSystem());
  }
}
