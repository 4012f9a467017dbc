// swift-format-ignore-file: TypeNamesShouldBeCapitalized, AlwaysUseLowerCamelCase, OrderedImports
// (This module declares C's names as Darwin spells them, and keeps its re-exports grouped by
// header, each group under the comment that names it.)
// A stand-in for Apple's Darwin module, for scripts/check-portable.sh: the portable targets are
// type-checked with their Linux branches (`canImport(Glibc)`, `os(Linux)`) switched off, so that
// they take their Darwin branches and see only what this module declares.
//
// It declares the C API those targets use, and nothing else. Most of it is glibc's own
// declaration, re-exported, where Darwin's Swift import has the same name and shape (POSIX file
// I/O, errno, mutexes and conditions, <math.h>). Where Darwin differs, it declares Darwin's
// shape instead, as Apple's SDK imports it into Swift (pthread_t is a pointer, the start routine
// takes a non-optional argument, getrlimit takes an Int32, stat's times are st_*timespec), with
// bodies that never run: this module is type-checked against, never linked.
//
// What this cannot show: that Apple's SDK declares exactly these shapes (nobody here has it),
// integer widths that differ (Darwin's mode_t is 16 bits, glibc's 32; these are glibc's), and
// anything about run time. A name the portable targets start using must be added here, which
// makes it a claim about Darwin that a reviewer can check.
import Glibc
// The types that share their names with functions (stat, flock, statvfs): a module of their own,
// since one Swift module cannot declare a type and a function of the same name.
@_exported import DarwinTypes

// <unistd.h>, <fcntl.h>, <sys/stat.h>, <sys/file.h>, <stdio.h>, <stdlib.h>, <string.h>
@_exported import func Glibc.open
@_exported import func Glibc.close
@_exported import func Glibc.read
@_exported import func Glibc.write
@_exported import func Glibc.pread
@_exported import func Glibc.pwrite
@_exported import func Glibc.lseek
@_exported import func Glibc.fsync
@_exported import func Glibc.ftruncate
@_exported import func Glibc.fchmod
@_exported import func Glibc.fcntl
@_exported import func Glibc.dup
@_exported import func Glibc.unlink
@_exported import func Glibc.rename
@_exported import func Glibc.mkdir
@_exported import func Glibc.mkstemp
@_exported import func Glibc.fstat
@_exported import func Glibc.lstat
@_exported import func Glibc.realpath
@_exported import func Glibc.free
@_exported import func Glibc.getenv
@_exported import func Glibc.strerror
@_exported import func Glibc.strtod
@_exported import func Glibc.memchr
@_exported import func Glibc.memcmp
@_exported import func Glibc.memmove
@_exported import func Glibc.umask
@_exported import func Glibc.access
@_exported import var Glibc.F_OK
@_exported import var Glibc.R_OK
@_exported import var Glibc.W_OK
@_exported import typealias Glibc.off_t
@_exported import typealias Glibc.mode_t
@_exported import var Glibc.errno
@_exported import var Glibc.O_RDONLY
@_exported import var Glibc.O_WRONLY
@_exported import var Glibc.O_RDWR
@_exported import var Glibc.O_CREAT
@_exported import var Glibc.O_EXCL
@_exported import var Glibc.O_TRUNC
@_exported import var Glibc.O_APPEND
@_exported import var Glibc.O_CLOEXEC
@_exported import var Glibc.O_NOFOLLOW
@_exported import var Glibc.F_SETFD
@_exported import var Glibc.F_GETFL
@_exported import var Glibc.FD_CLOEXEC
@_exported import var Glibc.SEEK_SET
@_exported import var Glibc.SEEK_CUR
@_exported import var Glibc.SEEK_END
@_exported import var Glibc.STDIN_FILENO
@_exported import var Glibc.STDOUT_FILENO
@_exported import var Glibc.STDERR_FILENO
@_exported import var Glibc.S_IFMT
@_exported import var Glibc.S_IFREG
@_exported import var Glibc.S_IFDIR
@_exported import var Glibc.S_IFLNK
@_exported import var Glibc.LOCK_EX
@_exported import var Glibc.LOCK_SH
@_exported import var Glibc.LOCK_NB
@_exported import var Glibc.LOCK_UN
@_exported import var Glibc.EINTR
@_exported import var Glibc.EINVAL
@_exported import var Glibc.ENOENT
@_exported import var Glibc.EEXIST
@_exported import var Glibc.EPERM
@_exported import var Glibc.EACCES
@_exported import var Glibc.EAGAIN
@_exported import var Glibc.EWOULDBLOCK
@_exported import var Glibc.ENOSPC
@_exported import var Glibc.EROFS
@_exported import var Glibc.EFBIG
@_exported import var Glibc.EDQUOT
@_exported import var Glibc.ENOSYS
@_exported import var Glibc.EOPNOTSUPP

// <math.h>
@_exported import func Glibc.sin
@_exported import func Glibc.cos
@_exported import func Glibc.tan
@_exported import func Glibc.atan
@_exported import func Glibc.atan2
@_exported import func Glibc.sqrt
@_exported import func Glibc.log
@_exported import func Glibc.log10
@_exported import func Glibc.pow
@_exported import func Glibc.exp

// <pthread.h>: the mutex and condition calls have the same shape on Darwin; threads do not.
@_exported import struct Glibc.pthread_mutex_t
@_exported import struct Glibc.pthread_cond_t
@_exported import struct Glibc.pthread_attr_t
@_exported import func Glibc.pthread_mutex_init
@_exported import func Glibc.pthread_mutex_destroy
@_exported import func Glibc.pthread_mutex_lock
@_exported import func Glibc.pthread_mutex_unlock
@_exported import func Glibc.pthread_cond_init
@_exported import func Glibc.pthread_cond_destroy
@_exported import func Glibc.pthread_cond_wait
@_exported import func Glibc.pthread_cond_broadcast
@_exported import func Glibc.pthread_cond_signal
@_exported import func Glibc.pthread_attr_init
@_exported import func Glibc.pthread_attr_destroy

/// Darwin's `struct _opaque_pthread_t`: what its `pthread_t` points to.
public struct _opaque_pthread_t {}
/// Darwin: `typedef struct _opaque_pthread_t *pthread_t`, imported as a non-optional pointer.
public typealias pthread_t = UnsafeMutablePointer<_opaque_pthread_t>

/// Darwin's `pthread_create`: the thread comes back as a `pthread_t?`, and the start routine
/// takes a non-optional pointer (`_Nonnull` in its header).
@discardableResult public func pthread_create(
    _ thread: UnsafeMutablePointer<pthread_t?>!, _ attributes: UnsafePointer<pthread_attr_t>?,
    _ start: @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 { fatalError("a type-checking stand-in for Darwin") }

/// Darwin's `pthread_join`.
@discardableResult public func pthread_join(
    _ thread: pthread_t, _ value: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> Int32 {
    fatalError("a type-checking stand-in for Darwin")
}

extension stat {
    /// Darwin's name for the modification time (`st_mtim` on Linux).
    public var st_mtimespec: timespec { fatalError("a type-checking stand-in for Darwin") }
    /// Darwin's name for the access time.
    public var st_atimespec: timespec { fatalError("a type-checking stand-in for Darwin") }
    /// Darwin's name for the status change time.
    public var st_ctimespec: timespec { fatalError("a type-checking stand-in for Darwin") }
}

// <time.h>, <signal.h>, <sys/statvfs.h>, <sys/resource.h>: WaymarkStore.
@_exported import struct Glibc.timespec
@_exported import func Glibc.nanosleep
@_exported import func Glibc.usleep
@_exported import func Glibc.kill
@_exported import func Glibc.getpid
@_exported import func Glibc.gethostname
@_exported import typealias Glibc.pid_t
@_exported import struct Glibc.rlimit
@_exported import typealias Glibc.rlim_t

/// Darwin's `RLIMIT_FSIZE`: a plain `Int32` macro (glibc's is an enum case).
public var RLIMIT_FSIZE: Int32 { 1 }

/// Darwin's `getrlimit`, whose resource is an `Int32`.
@discardableResult public func getrlimit(_ resource: Int32, _ limit: UnsafeMutablePointer<rlimit>!) -> Int32 {
    fatalError("a type-checking stand-in for Darwin")
}

// The functions named like their types, with the same shape as on Darwin.

@discardableResult public func stat(_ path: UnsafePointer<CChar>!, _ buffer: UnsafeMutablePointer<stat>!) -> Int32 {
    fatalError("a type-checking stand-in for Darwin")
}

@discardableResult public func flock(_ descriptor: Int32, _ operation: Int32) -> Int32 {
    fatalError("a type-checking stand-in for Darwin")
}

@discardableResult public func statvfs(_ path: UnsafePointer<CChar>!, _ buffer: UnsafeMutablePointer<statvfs>!) -> Int32
{
    fatalError("a type-checking stand-in for Darwin")
}
