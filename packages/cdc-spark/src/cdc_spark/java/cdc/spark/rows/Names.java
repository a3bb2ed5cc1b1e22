package cdc.spark.rows;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

/**
 * The member names of one JSON object, in order, to find a name given twice. The names come from a parser of {@link
 * Members#JSON}, which interns them: equal names are one String, so while there are few a scan comparing references
 * is cheaper than hashing (and than comparing texts, most of which differ); past {@link #SCANNED} names a hash set
 * takes over.
 */
public final class Names {
  private static final int SCANNED = 32;
  private String[] names = new String[16];
  private int size;
  private Set<String> hashed;

  /** Empties it, for the next object. */
  public void clear() {
    size = 0;
    hashed = null;
  }

  /** Adds {@code name}; false if it was there. */
  public boolean add(String name) {
    if (contains(name)) {
      return false;
    }
    if (size == names.length) {
      names = Arrays.copyOf(names, size * 2);
    }
    names[size++] = name;
    if (hashed != null) {
      hashed.add(name);
    } else if (size > SCANNED) {
      hashed = new HashSet<>(Arrays.asList(names).subList(0, size));
    }
    return true;
  }

  public boolean contains(String name) {
    if (hashed != null) {
      return hashed.contains(name);
    }
    for (int i = 0; i < size; i++) {
      if (names[i] == name) {
        return true;
      }
    }
    return false;
  }

  /** Whether the name at {@code position} is {@code name}. */
  public boolean at(int position, String name) {
    return position < size && names[position] == name;
  }

  public String get(int position) {
    return names[position];
  }

  public int size() {
    return size;
  }
}
