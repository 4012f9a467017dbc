// swift-format-ignore-file: TypeNamesShouldBeCapitalized, AlwaysUseLowerCamelCase
// (These are C's type names, as Darwin spells them.)
// Part of the Darwin stand-in of scripts/check-portable.sh (see Darwin.swift): the C structs
// whose names are also functions' names, which Darwin.swift declares beside them.
import Glibc

public typealias stat = Glibc.stat
public typealias flock = Glibc.flock
public typealias statvfs = Glibc.statvfs
