package lockfile

// recordAt is where a lock file's record starts. On Windows a lock is a
// byte-range lock of the file's first byte (LockFileEx, as flock takes
// it), and no other handle may read or write a locked byte, not even one
// of the locking process: a record there could be neither written by its
// holder, through the second handle Write opens, nor read by anyone else.
// It lies past that byte.
const recordAt = 1
