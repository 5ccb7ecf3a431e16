#!/usr/bin/env bash
# tools/deps.sh - installs the Debian 12 packages memprof needs to build,
# test and benchmark, if any are missing.  Run as root (or with sudo).
set -eu
packages=(
    gcc g++ make pkg-config binutils       # build
    libelf-dev libdw-dev libunwind-dev libjson-c-dev zlib1g-dev libdeflate-dev
    libreadline-dev libjemalloc-dev libjemalloc2 check
    libiberty-dev                           # demangling C++ and Rust names
    libprotobuf-c-dev protobuf-c-compiler protobuf-compiler  # pprof export (protoc: tests)
    clang libclang-rt-14-dev                # make fuzz (libFuzzer)
    redis-server redis-tools                # integration: a real third-party server
    nginx-light curl wrk                    # integration: a real glibc-malloc server (curl, wrk drive it)
    apache2                                 # integration: Apache 2.4 mpm_event, its memory from APR's
                                            #   allocator (t_sampler_apache; run from a private config)
    postgresql                              # integration: PostgreSQL 15, glibc malloc (postgresql-15:
                                            #   initdb, postgres in /usr/lib/postgresql/15/bin; psql)
    memcached mariadb-server mariadb-client # integration: t_memory_servers (memcached's slabs are glibc's
                                            #   mmapped chunks; MariaDB's many threads and arenas)
    libgoogle-perftools-dev                 # targets: gperftools tcmalloc 2.10 (-ltcmalloc, -ltcmalloc_minimal)
    libmimalloc-dev                         # targets: mimalloc (-lmimalloc)
    strace gdb procps python3 time tmux     # tests and benchmarks
    bpfcc-tools "linux-headers-$(dpkg --print-architecture)"
                                            # bench-sampler: bcc's memleak, which compiles its BPF
                                            #   program against kernel headers (Debian's newest when
                                            #   the running kernel has none of its own)
    linux-perf                              # bench-faults: perf record --call-graph dwarf, the
                                            #   tool `faults` is measured against
    graphviz                                # graph: dot renders .svg/.png/.pdf
    rustc cargo librust-jemalloc-sys-dev    # the Rust test target (tests/targets/rust)
    libdebuginfod-dev libdebuginfod1        # debug files fetched by build-id
    libseccomp-dev                          # tests: the seccomp evaluator's unit test and the
                                            #   container-like test targets build real filters with it
    debuginfod                              # integration: a real debuginfod server
    chromium                                # integration: the flame graph in a browser
    libmicrohttpd-dev                       # memprof serve: the HTTP agent
    libyaml-dev libgnutls28-dev             # memprof serve --web-config: its YAML, its certificates
    openssl whois                           # integration: certificates (openssl), bcrypt hashes
                                            #   (mkpasswd -m bcrypt) for --web-config
    prometheus golang-go                    # integration: serve scraped by prometheus, read by go tool pprof
    gcc-aarch64-linux-gnu qemu-system-arm   # the arm64 lane (tools/arm64): cross compiler, emulated
    dpkg-dev cpio file                      #   machine; apt-get source, the initramfs, build checks
    podman runc debootstrap                 # real containers (tools/containers): rootful podman with
                                            #   runc (crun refuses hybrid cgroups), images imported
                                            #   from debootstrap roots (never pulled)
    docker.io                               # t_container_docker: Debian's Docker 20.10 (dockerd,
                                            #   containerd, runc), run privately by the test
                                            #   (tests/integration/docker.sh); its own units are
                                            #   kept from starting at boot (below)
    python3-yaml                            # integration: deploy/kubernetes's manifests parsed
    debhelper lintian                       # make deb (tools/deb.sh) and its lint; t_package_deb installs
                                            #   it into a debootstrap root (tools/package/root.sh)
    python3-seccomp                         # t_package_service: the unit's SystemCallFilter as a filter
)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo=; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# docker.io enables docker.service and docker.socket (and containerd's)
# on install: the tests run their own dockerd, a daemon the machine does
# not need.  Only when deps.sh just installed it (a host that had Docker
# keeps its settings); nothing to do where systemd does not run.
if [[ " ${missing[*]-} " == *" docker.io "* ]] && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now docker.socket docker.service containerd.service >/dev/null 2>&1 || true
fi
