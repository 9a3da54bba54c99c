//! The machine's tests: record order, mappings, objects and symbols.

use super::*;
use crate::perf::symbols::build_id_hex;

#[test]
fn rounds_sort_as_a_stable_sort_does() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rand = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    // From one run to many, short queues and long ones, with equal times within and
    // across runs; the second element tells equal times apart.
    for runs in [1usize, 2, 3, 5, 8, 20, 40, 200] {
        for _ in 0..20 {
            let mut q: Vec<(u64, usize)> = Vec::new();
            for _ in 0..runs {
                let mut t = rand(50);
                for _ in 0..rand(30) {
                    t += rand(3);
                    q.push((t, q.len()));
                }
            }
            let mut want = q.clone();
            want.sort_by_key(|(t, _)| *t);
            sort_by_time(&mut q);
            assert_eq!(q, want, "{runs} runs");
        }
    }
}

fn chain_of(ips: &[u64]) -> Vec<u64> {
    let raw: Vec<u8> = ips.iter().flat_map(|ip| ip.to_ne_bytes()).collect();
    let s = Sample {
        cpumode: misc::USER,
        callchain_raw: &raw,
        endian: crate::endian::Endianness::NATIVE,
        ..Sample::default()
    };
    let m = Machine::new(KallsymsSource::default(), None);
    let mut out = Vec::new();
    m.callchain(&s, |_, ip| out.push(ip));
    out
}

fn mmap(pid: i32, start: u64, len: u64, filename: &[u8], cpumode: u16) -> Event<'_> {
    Event::Mmap {
        pid,
        tid: pid,
        start,
        len,
        pgoff: 0,
        filename,
        exec: true,
        prot: 0,
        flags: 0,
        data: false,
        mmap2: false,
        cpumode,
        dso_id: DsoId::default(),
        build_id: None,
        id: Default::default(),
    }
}

/// perf 6.1 printed `7ff7c9532817 [unknown] (/tmp/perf-20993.map)` for a frame in
/// a JIT's anonymous executable memory: the address as sampled, the perf map file
/// of the process as its file.
#[test]
fn anonymous_code_keeps_its_address_and_is_named_after_the_perf_map() {
    let mut m = Machine::new(KallsymsSource::default(), None);
    m.apply(&mmap(
        20993,
        0x7ff7c9500000,
        0x100000,
        b"//anon",
        misc::USER,
    ));
    let l = m.resolve(20993, misc::USER, 0x7ff7c9532817);
    assert_eq!(l.addr, 0x7ff7c9532817);
    assert_eq!(l.dso, Some("/tmp/perf-20993.map"));
    assert_eq!(l.sym, None);
}

fn fork(pid: i32, ppid: i32, synthesized: bool) -> Event<'static> {
    Event::Task {
        exit: false,
        pid,
        ppid,
        tid: pid,
        ptid: ppid,
        time: 0,
        synthesized,
        id: Default::default(),
    }
}

/// perf 6.1 (`--show-round-events`, records in the file's order) printed
/// `401621 [unknown] ([unknown])` with the comm `sh` for a sample of an exec'd
/// program whose FORK record came in the file after its exec's COMM and MMAP2: the
/// fork gives the process a copy of its parent's mappings in place of its own. A
/// fork perf wrote for a task that ran before the recording copies none.
#[test]
fn a_fork_replaces_the_mappings_of_its_pid() {
    let mut m = Machine::new(KallsymsSource::default(), None);
    m.apply(&mmap(10, 0x7f0000000000, 0x1000, b"//anon", misc::USER));
    m.apply(&mmap(20, 0x401000, 0x1000, b"//anon", misc::USER));
    let mapped = |m: &Machine, pid, addr| m.resolve(pid, misc::USER, addr).dso.is_some();
    assert!(mapped(&m, 20, 0x401010));
    m.apply(&fork(20, 10, false));
    assert!(!mapped(&m, 20, 0x401010));
    assert!(mapped(&m, 20, 0x7f0000000010));
    m.apply(&mmap(30, 0x401000, 0x1000, b"//anon", misc::USER));
    m.apply(&fork(30, 10, true));
    assert!(!mapped(&m, 30, 0x401010));
    assert!(!mapped(&m, 30, 0x7f0000000010));
}

/// A machine whose kernel map holds three symbols, `iter_file_splice_write` among them.
fn kernel_machine() -> Machine {
    let kallsyms = "ffffffff81000000 T _text\nffffffff8170cf30 T iter_file_splice_write\n\
                    ffffffff8170d400 T next_fn\n";
    let mut m = Machine::new(KallsymsSource::text_of(kallsyms.into()), None);
    m.apply(&mmap(
        -1,
        0xffffffff81000000,
        0x1000000,
        b"[kernel.kallsyms]_text",
        misc::KERNEL,
    ));
    m
}

/// perf 6.1 printed `ffffffff8170d108 [unknown] ([unknown])` for that address in the
/// user part of a chain (a frame-pointer walk gone astray), and the kernel symbol
/// only where the chain said the kernel.
#[test]
fn a_user_address_outside_every_mapping_is_unknown_even_in_kernel_range() {
    let m = kernel_machine();
    let user = m.resolve(7, misc::USER, 0xffffffff8170d108);
    assert_eq!((user.sym, user.dso), (None, None));
    let kernel = m.resolve(7, misc::KERNEL, 0xffffffff8170d108);
    assert_eq!(kernel.sym, Some(("iter_file_splice_write", 0x1d8)));
    assert_eq!(kernel.dso, Some("[kernel.kallsyms]"));
}

/// Tables loaded ahead are the ones a lookup uses, and loading one ahead is no
/// lookup: librsalias.so, whose loading stops part way, still shows nothing at
/// perf's first lookup in it and its symbol at the next.
#[test]
fn a_table_loaded_ahead_keeps_the_first_lookup_rule() {
    let symfs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs");
    let mut m = Machine::new(KallsymsSource::default(), Some(symfs));
    m.apply(&mmap(
        7,
        0x400000,
        0x10000,
        b"/tmp/tpf/librsalias.so",
        misc::USER,
    ));
    let raw: Vec<u8> = [context::USER, 0x40110f]
        .iter()
        .flat_map(|ip| ip.to_ne_bytes())
        .collect();
    let s = Sample {
        pid: 7,
        tid: 7,
        cpumode: misc::USER,
        callchain_raw: &raw,
        endian: crate::endian::Endianness::NATIVE,
        ..Sample::default()
    };
    m.load_user_tables(&s, &mut [0; LOOKED_UP_SLOTS]);
    assert!(m.dsos[0].symbols.get().is_some_and(Option::is_some));
    assert_eq!(m.resolve(7, misc::USER, 0x40110f).sym, None);
    assert_eq!(
        m.resolve(7, misc::USER, 0x40110f).sym,
        Some(("alias_number_five_eeeee_e", 0x16))
    );
}

/// A perf.data file of one software event whose records are `records` (MMAP and
/// MMAP2 bodies with their type and misc), applied in order to a machine reading
/// files under tests/data/perf/symfs, with `build_ids` as its BUILD_ID feature.
fn machine_of(records: &[(u32, u16, Vec<u8>)], build_ids: &[(&str, &[u8])]) -> Machine {
    let symfs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs");
    let mut m = Machine::new(KallsymsSource::default(), Some(symfs));
    feed(&mut m, records, build_ids);
    m
}

/// A perf.data file written at `p` of one software event (cpu-clock, samples with
/// their ip and pid/tid) whose records are `records` (type, misc, body), in order.
fn cpu_clock_file(p: &Path, records: &[(u32, u16, Vec<u8>)]) -> PerfData {
    use super::super::data::write::{AttrEntry, PerfDataWriter};
    let mut attr = vec![0u8; 128];
    attr[..4].copy_from_slice(&1u32.to_ne_bytes());
    attr[4..8].copy_from_slice(&128u32.to_ne_bytes());
    let st = super::super::data::abi::sample::IP | super::super::data::abi::sample::TID;
    attr[24..32].copy_from_slice(&st.to_ne_bytes());
    let entry = AttrEntry {
        attr,
        ids: vec![1],
        name: "cpu-clock".into(),
    };
    let mut w = PerfDataWriter::create(p, vec![entry]).unwrap();
    for (type_, misc, body) in records {
        let mut h = [0u8; 8];
        h[..4].copy_from_slice(&type_.to_ne_bytes());
        h[4..6].copy_from_slice(&misc.to_ne_bytes());
        h[6..].copy_from_slice(&(8 + body.len() as u16).to_ne_bytes());
        w.record(&[&h, body]).unwrap();
    }
    w.finish(&Default::default()).unwrap();
    PerfData::open(p).unwrap()
}

/// [`machine_of`] on a machine of the caller's.
fn feed(m: &mut Machine, records: &[(u32, u16, Vec<u8>)], build_ids: &[(&str, &[u8])]) {
    let dir = tempfile::tempdir().unwrap();
    let file = cpu_clock_file(&dir.path().join("perf.data"), records);
    m.set_build_ids(
        build_ids
            .iter()
            .map(|(n, id)| BuildIdEntry {
                misc: if n.starts_with("[kernel") {
                    misc::KERNEL
                } else {
                    misc::USER
                },
                pid: -1,
                id: id.to_vec(),
                filename: n.to_string(),
            })
            .collect(),
    );
    for r in file.records() {
        m.apply(&file.decode(&r.unwrap()).unwrap());
    }
}

/// The body of an MMAP2 record of the text of tests/data/perf/symfs/tmp/tpf/spin
/// (`path`) into `pid`, with the 24 bytes of device and inode (or build id) given.
fn spin_mmap2(pid: i32, path: &str, id: [u8; 24]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&pid.to_ne_bytes());
    b.extend_from_slice(&pid.to_ne_bytes());
    for v in [0x401000u64, 0x78000, 0x1000] {
        b.extend_from_slice(&v.to_ne_bytes());
    }
    b.extend_from_slice(&id);
    b.extend_from_slice(&5u32.to_ne_bytes()); // PROT_READ | PROT_EXEC
    b.extend_from_slice(&2u32.to_ne_bytes()); // MAP_PRIVATE
    b.extend_from_slice(path.as_bytes());
    b.resize((b.len() + 8) & !7, 0);
    b
}

/// The body of an MMAP record (no device, no inode) of the same text.
fn spin_mmap(pid: i32, path: &str) -> Vec<u8> {
    let mut b = spin_mmap2(pid, path, [0; 24]);
    b.drain(32..64);
    b
}

/// maj, min, ino and ino_generation as an MMAP2 record stores them.
fn inode(maj: u32, min: u32, ino: u64, generation: u64) -> [u8; 24] {
    let mut id = [0u8; 24];
    id[..4].copy_from_slice(&maj.to_ne_bytes());
    id[4..8].copy_from_slice(&min.to_ne_bytes());
    id[8..16].copy_from_slice(&ino.to_ne_bytes());
    id[16..].copy_from_slice(&generation.to_ne_bytes());
    id
}

/// A build id as an MMAP2 record with PERF_RECORD_MISC_MMAP_BUILD_ID stores it.
fn build_id_field(id: &[u8]) -> [u8; 24] {
    let mut f = [0u8; 24];
    f[0] = id.len() as u8;
    f[4..4 + id.len()].copy_from_slice(id);
    f
}

/// `hot_function` of tests/data/perf/symfs/tmp/tpf/spin.
const HOT: u64 = 0x401620;

/// What `pid` sees at [`HOT`]: its object and its symbol.
fn at_hot(m: &Machine, pid: i32) -> (Option<ObjectId>, Option<&str>) {
    let l = m.resolve(pid, misc::USER, HOT);
    assert_eq!(l.dso, Some("/tmp/tpf/spin"));
    (l.object, l.sym.map(|(n, _)| n))
}

/// As perf 6.1's `dsos__findnew_id`: one path mapped from two files (another
/// device or inode) is two objects; the same file again, an MMAP record without
/// an id or an id of zeros is the object already there, and so is one whose inode
/// generation differs from a generation of 0; an object without an id takes the
/// first id it meets; the kernel's vDSO is one object whatever its ids.
#[test]
fn objects_of_one_path_are_told_apart_by_device_and_inode() {
    use record::{MMAP, MMAP2};
    let spin = "/tmp/tpf/spin";
    let m = machine_of(
        &[
            (
                MMAP2,
                misc::USER,
                spin_mmap2(7, spin, inode(254, 0, 100, 0)),
            ),
            (MMAP2, misc::USER, spin_mmap2(8, spin, inode(0, 39, 2, 0))),
            (
                MMAP2,
                misc::USER,
                spin_mmap2(9, spin, inode(254, 0, 100, 0)),
            ),
            (
                MMAP2,
                misc::USER,
                spin_mmap2(10, spin, inode(254, 0, 100, 1)),
            ),
            (MMAP2, misc::USER, spin_mmap2(11, spin, [0; 24])),
            (MMAP, misc::USER, spin_mmap(12, spin)),
        ],
        &[],
    );
    let objects: Vec<_> = (7..=12).map(|pid| at_hot(&m, pid).0.unwrap()).collect();
    let first = objects[0];
    assert_ne!(objects[1], first, "another device and inode");
    assert_eq!(objects[2], first, "the same file");
    assert_eq!(
        objects[3], first,
        "an inode generation of 0 compares equal to any"
    );
    assert_eq!(objects[4], first, "no id");
    assert_eq!(objects[5], first, "an MMAP record");
    // Each object reads the file for itself.
    for pid in 7..=12 {
        assert_eq!(at_hot(&m, pid).1, Some("hot_function"), "pid {pid}");
    }

    let m = machine_of(
        &[
            (MMAP, misc::USER, spin_mmap(7, spin)),
            (
                MMAP2,
                misc::USER,
                spin_mmap2(8, spin, inode(254, 0, 100, 0)),
            ),
            (
                MMAP2,
                misc::USER,
                spin_mmap2(9, spin, inode(254, 0, 200, 0)),
            ),
            (
                MMAP2,
                misc::USER,
                spin_mmap2(10, spin, inode(254, 0, 100, 0)),
            ),
        ],
        &[],
    );
    let objects: Vec<_> = (7..=10).map(|pid| at_hot(&m, pid).0.unwrap()).collect();
    assert_eq!(objects[1], objects[0], "the object without an id takes it");
    assert_ne!(objects[2], objects[0]);
    assert_eq!(objects[3], objects[0]);
    assert!(objects[0] < objects[2], "objects order as first mapped");

    let vdso = |pid: i32, ino: u64| {
        let mut b = spin_mmap2(pid, "[vdso]", inode(0, 0, ino, 0));
        b[8..16].copy_from_slice(&0x7fff0000u64.to_ne_bytes());
        b[16..24].copy_from_slice(&0x2000u64.to_ne_bytes());
        b
    };
    let m = machine_of(
        &[
            (MMAP2, misc::USER, vdso(7, 0)),
            (MMAP2, misc::USER, vdso(8, 5)),
        ],
        &[],
    );
    let at = |pid| m.resolve(pid, misc::USER, 0x7fff0100).object;
    assert!(at(7).is_some());
    assert_eq!(at(7), at(8));
}

/// Which of several objects of one path an MMAP record (no id) finds: the first
/// that perf's tree of objects meets from its root, which its balancing decides.
/// perf 6.1 on files of these records (objects told apart by perf's first lookup
/// in a file whose symbols load part way, which finds nothing) took the first
/// object of two, the second of three made with growing inodes (or shrinking),
/// the first of three whose first inode lay between the others, the second of five
/// with growing inodes and of three with growing device numbers; and two inode
/// generations (both set) made two objects.
#[test]
fn an_mmap_without_an_id_finds_the_object_perf_s_tree_meets_first() {
    use record::{MMAP, MMAP2};
    let spin = "/tmp/tpf/spin";
    let cases: &[(&[[u8; 24]], usize)] = &[
        (&[inode(254, 0, 1, 0), inode(254, 0, 2, 0)], 0),
        (
            &[
                inode(254, 0, 1, 0),
                inode(254, 0, 2, 0),
                inode(254, 0, 3, 0),
            ],
            1,
        ),
        (
            &[
                inode(254, 0, 2, 0),
                inode(254, 0, 1, 0),
                inode(254, 0, 3, 0),
            ],
            0,
        ),
        (
            &[
                inode(254, 0, 3, 0),
                inode(254, 0, 2, 0),
                inode(254, 0, 1, 0),
            ],
            1,
        ),
        (
            &[
                inode(254, 0, 1, 0),
                inode(254, 0, 2, 0),
                inode(254, 0, 3, 0),
                inode(254, 0, 4, 0),
                inode(254, 0, 5, 0),
            ],
            1,
        ),
        (
            &[inode(8, 0, 1, 0), inode(254, 0, 1, 0), inode(300, 0, 1, 0)],
            1,
        ),
    ];
    for (ids, want) in cases {
        let mut records: Vec<(u32, u16, Vec<u8>)> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (MMAP2, misc::USER, spin_mmap2(20 + i as i32, spin, *id)))
            .collect();
        records.push((MMAP, misc::USER, spin_mmap(10, spin)));
        let m = machine_of(&records, &[]);
        let objects: Vec<_> = (0..ids.len())
            .map(|i| at_hot(&m, 20 + i as i32).0.unwrap())
            .collect();
        let distinct: std::collections::BTreeSet<_> = objects.iter().collect();
        assert_eq!(distinct.len(), ids.len(), "{ids:?}: one object each");
        assert_eq!(at_hot(&m, 10).0, Some(objects[*want]), "{ids:?}");
    }
    let m = machine_of(
        &[
            (MMAP2, misc::USER, spin_mmap2(7, spin, inode(254, 0, 1, 2))),
            (MMAP2, misc::USER, spin_mmap2(8, spin, inode(254, 0, 1, 1))),
        ],
        &[],
    );
    assert_ne!(at_hot(&m, 7).0, at_hot(&m, 8).0, "two generations");
}

/// perf's build-id cache is the `--buildid-dir` given, `SYMFS/.debug` under
/// `--symfs` (which wins), else `~/.debug`: a file whose path holds nothing here is
/// read from its copy there, found by the build id its path is listed with (through
/// the cache's `.build-id/XX/REST` link).
#[test]
fn the_build_id_cache_is_where_perf_looks_for_it() {
    use record::MMAP2;
    let spin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs/tmp/tpf/spin");
    let path = "/nonexistent-tracectl-test/spin";
    let hex = "ae4df9702a7d4bc07222cccf7fd92ee18baa3eff";
    let id = elf_build_id(std::fs::read(&spin).unwrap().as_slice()).unwrap();
    assert_eq!(build_id_hex(&id), hex);
    let dir = tempfile::tempdir().unwrap();
    let keep_copy = |cache: &Path| {
        let at = cache.join(path.trim_start_matches('/')).join(hex);
        std::fs::create_dir_all(&at).unwrap();
        std::fs::copy(&spin, at.join("elf")).unwrap();
        // perf finds the copy by the link its cache keeps for the build id.
        let links = cache.join(".build-id").join(&hex[..2]);
        std::fs::create_dir_all(&links).unwrap();
        let target = format!("../..{path}/{hex}");
        std::os::unix::fs::symlink(target, links.join(&hex[2..])).unwrap();
    };
    keep_copy(&dir.path().join("cache"));
    keep_copy(&dir.path().join("symfs/.debug"));
    let records = [(
        MMAP2,
        misc::USER,
        spin_mmap2(7, path, inode(254, 0, 100, 0)),
    )];
    let found = |symfs: Option<&str>, buildid_dir: Option<&str>| {
        let mut m = Machine::new(KallsymsSource::default(), symfs.map(|s| dir.path().join(s)));
        if let Some(d) = buildid_dir {
            m.set_buildid_dir(dir.path().join(d));
        }
        feed(&mut m, &records, &[(path, &id)]);
        let l = m.resolve(7, misc::USER, HOT);
        assert_eq!(l.dso, Some(path));
        l.sym.map(|(n, _)| n.to_string())
    };
    let hot = Some("hot_function".to_string());
    assert_eq!(found(None, Some("cache")), hot);
    assert_eq!(
        found(None, Some("empty")),
        None,
        "not in a cache without it"
    );
    assert_eq!(found(Some("symfs"), Some("elsewhere")), hot);
    assert_eq!(found(Some("symfs-without-cache"), Some("cache")), None);
}

/// A build id belongs to the object it came with: one an MMAP2 record carries
/// (`--buildid-mmap`) is checked against that object's file only, and the other
/// object of the path reads its file all the same. One the BUILD_ID feature lists
/// for the path holds for every object of it (perf copies it to each).
#[test]
fn a_build_id_goes_with_its_object() {
    use record::MMAP2;
    let spin = "/tmp/tpf/spin";
    let right: &[u8] = &[
        0xae, 0x4d, 0xf9, 0x70, 0x2a, 0x7d, 0x4b, 0xc0, 0x72, 0x22, 0xcc, 0xcf, 0x7f, 0xd9, 0x2e,
        0xe1, 0x8b, 0xaa, 0x3e, 0xff,
    ];
    let wrong: &[u8] = &[0x11; 20];
    let with_id = misc::USER | misc::MMAP_BUILD_ID;
    let m = machine_of(
        &[
            (
                MMAP2,
                misc::USER,
                spin_mmap2(7, spin, inode(254, 0, 100, 0)),
            ),
            (MMAP2, with_id, spin_mmap2(8, spin, build_id_field(wrong))),
            (MMAP2, with_id, spin_mmap2(9, spin, build_id_field(right))),
        ],
        &[],
    );
    assert_eq!(at_hot(&m, 7).1, Some("hot_function"));
    assert_eq!(at_hot(&m, 8).1, None, "its file has another build id");
    assert_eq!(at_hot(&m, 9).1, Some("hot_function"));
    assert_ne!(at_hot(&m, 8).0, at_hot(&m, 9).0);

    // The feature's last id for the path holds for both objects.
    for (ids, found) in [
        (&[(spin, right), (spin, wrong)][..], None),
        (&[(spin, wrong), (spin, right)][..], Some("hot_function")),
    ] {
        let m = machine_of(
            &[
                (
                    MMAP2,
                    misc::USER,
                    spin_mmap2(7, spin, inode(254, 0, 100, 0)),
                ),
                (MMAP2, misc::USER, spin_mmap2(8, spin, inode(0, 39, 2, 0))),
            ],
            ids,
        );
        assert_ne!(at_hot(&m, 7).0, at_hot(&m, 8).0);
        assert_eq!((at_hot(&m, 7).1, at_hot(&m, 8).1), (found, found));
    }
}

/// perf 6.1 printed no frame for a sample whose chain was `USER, 0x7fe1d9d35355, 4,
/// 0xffffffffffffffff` (the last entry is no context it knows), and every frame
/// of a chain with known markers only.
#[test]
fn a_chain_with_an_unknown_context_marker_shows_nothing() {
    assert_eq!(
        chain_of(&[context::USER, 0x7fe1d9d35355, 4, u64::MAX]),
        Vec::<u64>::new()
    );
    assert_eq!(
        chain_of(&[context::KERNEL, 0xffffffff81000000, context::USER, 0x401000]),
        vec![0xffffffff81000000, 0x401000]
    );
    assert_eq!(chain_of(&[context::GUEST_KERNEL, 0x1]), Vec::<u64>::new());
}

/// Lookups made ahead on another thread, by a machine sharing the symbols, load the
/// tables this machine uses and leave what it finds unchanged: librsalias.so, whose
/// loading stops part way, still shows nothing at this machine's first lookup in it
/// and its symbol at the next.
#[test]
fn lookups_ahead_load_the_tables_and_keep_the_first_lookup_rule() {
    let mut sample = 0x40110fu64.to_ne_bytes().to_vec();
    sample.extend_from_slice(&7u32.to_ne_bytes());
    sample.extend_from_slice(&7u32.to_ne_bytes());
    let dir = tempfile::tempdir().unwrap();
    let file = cpu_clock_file(
        &dir.path().join("perf.data"),
        &[
            (
                record::MMAP,
                misc::USER,
                spin_mmap(7, "/tmp/tpf/librsalias.so"),
            ),
            (record::SAMPLE, misc::USER, sample),
        ],
    );
    let symfs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs");
    let mut m = Machine::new(KallsymsSource::default(), Some(symfs));
    let mut ahead = m.sharing_symbols();
    std::thread::scope(|scope| {
        scope.spawn(|| ahead.look_up_ahead(&file, &AtomicU64::new(0)));
    });
    for r in file.records() {
        let r = r.unwrap();
        if r.type_ != record::SAMPLE {
            m.apply(&file.decode(&r).unwrap());
        }
    }
    assert!(m.dsos[0].symbols.get().is_some_and(Option::is_some));
    assert_eq!(m.resolve(7, misc::USER, 0x40110f).sym, None);
    assert_eq!(
        m.resolve(7, misc::USER, 0x40110f).sym,
        Some(("alias_number_five_eeeee_e", 0x16))
    );
}
