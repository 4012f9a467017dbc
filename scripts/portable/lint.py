#!/usr/bin/env python3
"""Fails when a portable target uses Linux-only API outside a Linux guard.

Usage: scripts/portable/lint.py DIR...

A line is guarded when an enclosing `#if`/`#elseif` branch names Linux (`canImport(Glibc)`,
`canImport(Musl)`, `os(Linux)`), or follows a branch that holds on Darwin (`#else` after
`#if canImport(Darwin)` or `#if os(macOS)`); an `#else` after a Linux branch is not. Flagged
outside guards:
- `import Glibc` and names qualified with `Glibc.`;
- the Linux-only names in LINUX_ONLY below (glibc functions Darwin lacks or declares
  differently, Linux-only flags and struct fields), in code, not in comments or strings.
Files under /proc and /sys are read at run time and compile everywhere; they are not flagged
(their readers must fall back when the file is missing, which the tests cannot show here).
"""
import os
import re
import sys

# Each: a regular expression on a line of code, and what is wrong with it on Darwin.
LINUX_ONLY = [
    (r"\bimport\s+Glibc\b", "import Glibc: Darwin has no Glibc module"),
    (r"\bGlibc\.", "a name qualified with Glibc."),
    (r"\bsendfile\s*\(", "sendfile: Darwin's sends to a socket only, with other arguments"),
    (r"\.st_[amc]tim\b", "st_atim/st_mtim/st_ctim: Darwin spells them st_*timespec"),
    (r"\bpthread_t\s*\(\s*\)", "pthread_t(): Darwin's pthread_t is a pointer (use pthread_t?)"),
    (r"\bRLIMIT_\w+\.rawValue", "RLIMIT_*.rawValue: glibc's enum; Darwin's are Int32"),
    (r"\b__rlimit_resource", "__rlimit_resource: glibc only"),
    (r"\b(memrchr|strchrnul|rawmemchr|mempcpy|stpncpy_chk)\s*\(", "a GNU extension"),
    (r"\b(epoll_\w+|eventfd|inotify_\w+|signalfd|timerfd_\w+)\s*\(", "Linux-only system call"),
    (r"\b(accept4|pipe2|dup3|splice|tee|vmsplice|copy_file_range|renameat2|getrandom)\s*\(",
     "Linux-only system call"),
    (r"\b(fdatasync|posix_fadvise|posix_fallocate|fallocate|readahead|sync_file_range)\s*\(",
     "not on Darwin (use fsync or fcntl(F_FULLFSYNC))"),
    (r"\b(malloc_usable_size|mallinfo2?|malloc_trim|mallopt)\s*\(", "glibc's malloc only"),
    (r"\b(gettid|prctl|sched_getcpu|sched_setaffinity|syscall|personality)\s*\(", "Linux only"),
    (r"\bpthread_(setname_np|getname_np)\s*\(\s*pthread_self", "Darwin names only the current thread"),
    (r"\b(O_TMPFILE|O_PATH|O_NOATIME|O_DIRECT|O_LARGEFILE|O_DSYNC_LINUX)\b", "a Linux-only open flag"),
    (r"\b(MSG_NOSIGNAL|SOCK_CLOEXEC|SOCK_NONBLOCK|MSG_MORE|TCP_CORK|SO_REUSEPORT_LB)\b",
     "a Linux-only socket flag (Darwin: SO_NOSIGPIPE, fcntl)"),
    (r"\b(MAP_POPULATE|MAP_ANONYMOUS_LINUX|MADV_DONTDUMP|MADV_HUGEPAGE|MREMAP_\w+)\b", "Linux-only mmap flag"),
    (r"\b(AT_EMPTY_PATH|AT_NO_AUTOMOUNT|RENAME_NOREPLACE|RENAME_EXCHANGE)\b", "Linux-only *at() flag"),
    (r"\bCLOCK_(MONOTONIC_COARSE|REALTIME_COARSE|BOOTTIME|TAI)\b", "a Linux-only clock"),
    (r"\bFUTEX_\w+|\bSYS_\w+", "Linux-only system call number"),
]
COMPILED = [(re.compile(p), why) for p, why in LINUX_ONLY]
LINUX_GUARD = re.compile(r"canImport\(\s*(Glibc|Musl|Android)\s*\)|os\(\s*(Linux|Android)\s*\)")
# A condition that holds on Darwin: the branches after it (#elseif, #else) are not compiled there.
DARWIN_GUARD = re.compile(r"^#(else)?if\s+(canImport\(\s*Darwin\s*\)|os\(\s*(macOS|iOS|tvOS|watchOS|visionOS)\s*\))\s*$")


def code_only(line, state):
    """The line without comments and string literals; state carries /* */ and \"\"\" across lines."""
    out = []
    i = 0
    while i < len(line):
        if state["block"]:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out)
            state["block"] = False
            i = end + 2
            continue
        if state["multi"]:
            end = line.find('"""', i)
            if end < 0:
                return "".join(out)
            state["multi"] = False
            i = end + 3
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        if line.startswith('"""', i):
            state["multi"] = True
            i += 3
            continue
        if line[i] == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            out.append('""')
            i = j + 1
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


def check(path):
    problems = []
    # One entry per open #if: [whether the branch in force is left out on Darwin (it names
    # Linux, or follows a branch that holds on Darwin), whether an earlier branch holds there].
    stack = []
    state = {"block": False, "multi": False}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            stripped = raw.strip()
            if not state["block"] and not state["multi"]:
                if stripped.startswith("#if"):
                    stack.append([bool(LINUX_GUARD.search(stripped)), bool(DARWIN_GUARD.match(stripped))])
                    continue
                if stripped.startswith("#elseif"):
                    if stack:
                        darwin = stack[-1][1]
                        stack[-1] = [darwin or bool(LINUX_GUARD.search(stripped)),
                                     darwin or bool(DARWIN_GUARD.match(stripped))]
                    continue
                if stripped.startswith("#else"):
                    if stack:
                        stack[-1] = [stack[-1][1], stack[-1][1]]
                    continue
                if stripped.startswith("#endif"):
                    if stack:
                        stack.pop()
                    continue
            code = code_only(raw.rstrip("\n"), state)
            if any(entry[0] for entry in stack):
                continue
            for pattern, why in COMPILED:
                if pattern.search(code):
                    problems.append(f"{path}:{number}: {why}: {stripped}")
    return problems


def main(directories):
    problems = []
    files = 0
    for directory in directories:
        for root, _, names in os.walk(directory):
            for name in sorted(names):
                if name.endswith(".swift"):
                    files += 1
                    problems += check(os.path.join(root, name))
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-portable: {len(problems)} use(s) of Linux-only API outside a Linux guard "
              "(wrap them in #if canImport(Glibc) … #elseif canImport(Darwin) …)", file=sys.stderr)
        return 1
    print(f"check-portable: {files} files in {', '.join(directories)}: no Linux-only API outside guards")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
