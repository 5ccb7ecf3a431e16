//! rustprof: a Rust test target whose live heap is known exactly.
//!
//!   rustprof GO_FILE    prints "ready", waits until GO_FILE exists,
//!                       allocates, prints "allocated", then sleeps
//!   rustprof --heartbeat  for the pause benchmark (bench/pause.sh), as
//!                       tests/targets/heartbeat.c: a thread reads the clock
//!                       in a loop and prints "gap US" when two reads are
//!                       more than 50 us apart; main waits in join
//!
//! Its heap is jemalloc-sys's static, _rjem_-prefixed jemalloc with
//! profiling compiled in, under a #[global_allocator] (what
//! tikv-jemallocator does).  Waiting for GO_FILE lets a test switch the
//! profiler on first; at lg_prof_sample:0 each function below then holds
//! exactly these bytes (each a jemalloc size class):
//!
//!   rustprof::leaky::hold_vec          2 MiB    Vec<u8> grown by push
//!                                               (alloc::raw_vec::finish_grow)
//!   rustprof::store::Pool<T>::fill     1 MiB    generic method, T = u32
//!   rustprof::Store::zeroed            3 MiB    vec![0u8; ..]: alloc_zeroed
//!   rustprof::main::{{closure}}      512 KiB    a closure
//!   rustprof::inlined::hold_inline   256 KiB    #[inline(always)] into main:
//!                                               a frame only in DWARF
//!
//! The others are #[inline(never)] so that each is a frame of its own.
use std::alloc::{GlobalAlloc, Layout};
use std::os::raw::{c_int, c_void};

/// What tikv-jemallocator's Jemalloc does, in a few lines.
struct Jemalloc;

const MIN_ALIGN: usize = 16;

fn flags(layout: &Layout) -> c_int {
    if layout.align() <= MIN_ALIGN && layout.align() <= layout.size() {
        0
    } else {
        jemalloc_sys::MALLOCX_ALIGN(layout.align())
    }
}

unsafe impl GlobalAlloc for Jemalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        jemalloc_sys::mallocx(layout.size(), flags(&layout)) as *mut u8
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let f = flags(&layout);
        if f == 0 {
            jemalloc_sys::calloc(1, layout.size()) as *mut u8
        } else {
            jemalloc_sys::mallocx(layout.size(), f | jemalloc_sys::MALLOCX_ZERO) as *mut u8
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        jemalloc_sys::sdallocx(ptr as *mut c_void, layout.size(), flags(&layout))
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        jemalloc_sys::rallocx(ptr as *mut c_void, new_size, flags(&layout)) as *mut u8
    }
}

#[global_allocator]
static GLOBAL: Jemalloc = Jemalloc;

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

mod leaky {
    /// Grows one byte at a time: capacity doubles through
    /// alloc::raw_vec::finish_grow up to exactly 2 MiB.
    #[inline(never)]
    pub fn hold_vec(keep: &mut Vec<Vec<u8>>) {
        let mut v = Vec::new();
        for i in 0..2 * super::MIB {
            v.push(i as u8);
        }
        keep.push(v);
    }
}

mod store {
    pub struct Pool<T> {
        pub items: Vec<T>,
    }

    impl<T: Copy> Pool<T> {
        #[inline(never)]
        pub fn fill(&mut self, n: usize, value: T) {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(value);
            }
            self.items = v;
        }
    }
}

mod inlined {
    /// Has no frame of its own in an optimised build: only the DWARF's
    /// inlined-subroutine entries say these bytes are its.
    #[inline(always)]
    pub fn hold_inline(keep: &mut Vec<Vec<u8>>) {
        let mut v = Vec::with_capacity(256 * super::KIB);
        v.resize(256 * super::KIB, 3u8);
        keep.push(v);
    }
}

struct Store {
    blocks: Vec<Vec<u8>>,
}

impl Store {
    #[inline(never)]
    fn zeroed(&mut self, n: usize) {
        self.blocks.push(vec![0u8; n]);
    }
}

fn with_keep<F: FnOnce(&mut Vec<Vec<u8>>)>(keep: &mut Vec<Vec<u8>>, f: F) {
    f(keep)
}

fn wait_for(path: &std::path::Path) {
    while !path.exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Never returns: the heartbeat thread loops for ever.
fn heartbeat() {
    let beat = std::thread::spawn(|| {
        let mut prev = std::time::Instant::now();
        loop {
            let mut now = std::time::Instant::now();
            let gap = now.duration_since(prev).as_micros();
            if gap > 50 {
                println!("gap {}", gap);
                now = std::time::Instant::now();
            }
            prev = now;
        }
    });
    println!("ready");
    let _ = beat.join();
}

fn main() {
    // no closure here: the one below must stay main's {closure#0} (v0)
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("--heartbeat")) {
        heartbeat();
    }
    let go = match std::env::args_os().nth(1) {
        Some(p) => std::path::PathBuf::from(p),
        None => {
            eprintln!("usage: rustprof GO_FILE");
            std::process::exit(2);
        }
    };
    // Everything main keeps is allocated before "ready", so that only the
    // named functions allocate while the profiler samples.
    let mut keep: Vec<Vec<u8>> = Vec::with_capacity(16);
    let mut store = Store { blocks: Vec::with_capacity(16) };
    let mut pool = store::Pool { items: Vec::new() };
    println!("ready");
    wait_for(&go);

    leaky::hold_vec(&mut keep);
    pool.fill(MIB / 4, 5u32);
    store.zeroed(3 * MIB);
    with_keep(
        &mut keep,
        #[inline(never)]
        |keep: &mut Vec<Vec<u8>>| {
            let mut v = Vec::with_capacity(512 * KIB);
            v.resize(512 * KIB, 7u8);
            keep.push(v);
        },
    );
    inlined::hold_inline(&mut keep);

    println!("allocated {} {} {}", keep.len(), pool.items.len(), store.blocks.len());
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}
