# memprof serve --web-config, the exporter toolkit's web config: https with
# a certificate made here (curl checks it with --cacert), basic-auth users
# with bcrypt hashes made by mkpasswd (package whois), the same 401 for no
# credentials, a wrong password and an unknown user; plain HTTP to the TLS
# port fails; Debian's prometheus scrapes it over https with basic_auth;
# min_version and client certificates honoured; each bad file refused at
# start, exit 2, saying what is wrong.
. "$SRCDIR/tests/integration/lib.sh"

cd "$WORK" || die "no work dir"
# The server's certificate, for 127.0.0.1; a CA and a client certificate
# it signed; a client certificate no CA signed.
quietly openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout server.key -out server.crt -subj /CN=memprof-test \
    -addext subjectAltName=IP:127.0.0.1 || die "openssl: no server certificate"
quietly openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout ca.key -out ca.crt -subj /CN=memprof-test-ca || die "openssl: no CA"
quietly openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout client.key \
    -out client.csr -subj /CN=scraper || die "openssl: no client request"
quietly openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -out client.crt || die "openssl: no client certificate"
quietly openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout stranger.key -out stranger.crt -subj /CN=stranger || die "openssl: no stranger"
quietly openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout other.key -out other.crt -subj /CN=other || die "openssl: no second key"
chmod 600 ./*.key
HASH=$(mkpasswd -m bcrypt -R 10 -s <<<'scrape-pass') || die "mkpasswd -m bcrypt failed (package whois)"
HASH2=$(mkpasswd -m bcrypt -R 10 -s <<<'other-pass')

# Relative names: taken from the config file's folder, as the toolkit does.
cat >web.yml <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
http_server_config:
  headers:
    X-Frame-Options: deny
basic_auth_users:
  prom: $HASH
  other: '$HASH2'
EOF
cd / || die "cd /"
# No process served: /metrics answers at once, so a scrape's time is the
# TLS and the check of its user, not the host's processes.
start_serve --web-config "$WORK/web.yml" --target "exe=$WORK/none"
SERVE_URL=https://${SERVE_URL#http://}
check "the first line says https and basic auth" \
    grep -q 'listening on 127.0.0.1:[0-9]*, https (TLS 1.2 to 1.3), basic auth (2 users)' "$SERVE_LOG"

https() { http "$@" --cacert "$WORK/server.crt"; }
https GET / -u prom:scrape-pass
check "the right password over https: 200" status_is 200
check "the index is served behind it" body_has '/metrics'
check "the configured X-Frame-Options header" header_has '^X-Frame-Options: deny'
https GET /processes -u other:other-pass
check "the second user: 200" status_is 200
https GET /
check "no credentials: 401" status_is 401
check "no credentials: WWW-Authenticate: Basic realm=\"memprof\"" header_has '^WWW-Authenticate: Basic realm="memprof"'
cp "$WORK/body" "$WORK/body.none"
https GET / -u prom:wrong-pass
check "a wrong password: 401" status_is 401
check "a wrong password: the same body as no credentials" cmp -s "$WORK/body" "$WORK/body.none"
https GET / -u nobody:scrape-pass
check "an unknown user: 401" status_is 401
check "an unknown user: the same body" cmp -s "$WORK/body" "$WORK/body.none"
check "an unknown user: WWW-Authenticate" header_has '^WWW-Authenticate: Basic realm="memprof"'
https GET "/metrics?pid=1" -u prom:wrong-pass
check "before routing: a wrong password on a refused pid is 401, not 403" status_is 401
check "each failure logged with the client's address and why" sh -c "
    grep -q '127.0.0.1 GET / -> 401: no basic-auth credentials' '$SERVE_LOG' &&
    grep -q \"127.0.0.1 GET / -> 401: wrong password for user 'prom'\" '$SERVE_LOG' &&
    grep -q \"127.0.0.1 GET / -> 401: no such user 'nobody'\" '$SERVE_LOG'"
check "no password reaches the log" sh -c "! grep -Eq 'scrape-pass|wrong-pass|other-pass' '$SERVE_LOG'"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://${SERVE_URL#https://}/")
check "plain http to the TLS port gets no HTTP answer" test "$STATUS" = 000

# The cost of bcrypt, and of a check the cache answers (for the record).
for i in 1 2 3; do
    curl -s -o /dev/null -w "cached check, request $i: %{time_total} s\n" --cacert "$WORK/server.crt" \
        -u prom:scrape-pass "$SERVE_URL/" >&2
done
curl -s -o /dev/null -w "wrong password (bcrypt paid): %{time_total} s\n" --cacert "$WORK/server.crt" \
    -u prom:not-cached "$SERVE_URL/" >&2

# Debian's prometheus scrapes it: scheme https, tls_config ca_file, basic_auth.
cat >"$WORK/prometheus.yml" <<YML
global: {scrape_interval: 2s, scrape_timeout: 2s}
scrape_configs:
  - job_name: memprof
    scheme: https
    tls_config: {ca_file: '$WORK/server.crt'}
    basic_auth: {username: prom, password: scrape-pass}
    static_configs: [{targets: ['${SERVE_URL#https://}']}]
  - job_name: memprof-nopass
    scheme: https
    tls_config: {ca_file: '$WORK/server.crt'}
    static_configs: [{targets: ['${SERVE_URL#https://}']}]
YML
start_prometheus
wait_until 60 "prometheus to have scraped memprof over https" prom_query 'up{job="memprof"}'
check "prometheus over https with basic_auth: up == 1" prom_query 'up{job="memprof"} == 1'
wait_until 60 "prometheus to have tried without a password" prom_query 'up{job="memprof-nopass"}'
check "prometheus without basic_auth: up == 0" prom_query 'up{job="memprof-nopass"} == 0'
check "the agent is alive" alive "$SERVE_PID"

# min_version honoured: TLS13 only.
cat >"$WORK/tls13.yml" <<EOF
tls_server_config:
  cert_file: $WORK/server.crt
  key_file: $WORK/server.key
  min_version: TLS13
EOF
start_serve --web-config "$WORK/tls13.yml"
SERVE_URL=https://${SERVE_URL#http://}
check "min_version TLS13: said on the first line" grep -q 'https (TLS 1.3)' "$SERVE_LOG"
https GET /
check "min_version TLS13: TLS 1.3 served (no users: no auth)" status_is 200
https GET / --tls-max 1.2
check "min_version TLS13: TLS 1.2 refused" status_is 000

# Client certificates: RequireAndVerifyClientCert against client_ca_file.
cat >"$WORK/mtls.yml" <<EOF
tls_server_config:
  cert_file: $WORK/server.crt
  key_file: $WORK/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $WORK/ca.crt
EOF
start_serve --web-config "$WORK/mtls.yml"
SERVE_URL=https://${SERVE_URL#http://}
https GET / --cert "$WORK/client.crt" --key "$WORK/client.key"
check "a client certificate the CA signed: 200" status_is 200
https GET /
check "no client certificate: 403" status_is 403
https GET / --cert "$WORK/stranger.crt" --key "$WORK/stranger.key"
check "a certificate the CA did not sign: 403" status_is 403
check "the agent says why, each time" sh -c "grep -q 'GET / -> 403: no client certificate' '$SERVE_LOG' &&
    grep -q 'GET / -> 403: client certificate refused: .*issuer is unknown' '$SERVE_LOG'"

# Bad files: exit 2 before anything listens, saying what is wrong.
refused() {     # refused NAME YAML-FILE REGEX
    local name=$1 file=$2 want=$3 rc=0
    "$MEMPROF" serve --listen 127.0.0.1:0 --web-config "$file" >"$WORK/out" 2>"$WORK/err" || rc=$?
    printf '%s: exit %d: %s\n' "$name" "$rc" "$(cat "$WORK/err")" >&2
    check "$name: exit 2" test "$rc" = 2
    check "$name: says so" grep -Eq -- "$want" "$WORK/err"
}
refused "a missing web config" "$WORK/nowhere.yml" "--web-config $WORK/nowhere.yml: cannot read it: No such file"
bad() { cat >"$WORK/bad.yml"; }
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  colour: blue\n' \
    "$WORK/server.crt" "$WORK/server.key" | bad
refused "an unknown key" "$WORK/bad.yml" "line 4: unknown key 'colour' in tls_server_config"
printf 'basic_auth_users:\n  prom: $1$abc$defghijklmnopqrstuv\n' | bad
refused "a hash that is not bcrypt" "$WORK/bad.yml" "line 2: .*user 'prom' is not a bcrypt hash"
printf 'basic_auth_users:\n  prom: %s\n  prom: %s\n' "$HASH" "$HASH2" | bad
refused "a user given twice" "$WORK/bad.yml" "line 3: basic_auth_users: user 'prom' given twice"
printf 'basic_auth_users: [prom]\n' | bad
refused "a list where a mapping goes" "$WORK/bad.yml" "line 1: basic_auth_users takes a mapping"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$WORK/no-such.crt" "$WORK/server.key" | bad
refused "a certificate that is not there" "$WORK/bad.yml" "cert_file $WORK/no-such.crt: cannot read it: No such file"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$WORK" "$WORK/server.key" | bad
refused "a certificate that cannot be read (a folder)" "$WORK/bad.yml" "cert_file $WORK: cannot read it: not a regular file"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$WORK/web.yml" "$WORK/server.key" | bad
refused "a certificate file with no certificate" "$WORK/bad.yml" "cert_file $WORK/web.yml: no PEM certificate"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$WORK/server.crt" "$WORK/other.key" | bad
refused "a key that is not the certificate's" "$WORK/bad.yml" "key_file $WORK/other.key is not the private key of the certificate in cert_file $WORK/server.crt"
printf 'tls_server_config:\n  cert_file: %s\n' "$WORK/server.crt" | bad
refused "a certificate without its key" "$WORK/bad.yml" "missing key_file"
printf 'http_server_config:\n  http2: true\n' | bad
refused "http2: true" "$WORK/bad.yml" "line 2: http2: true is not supported"
printf 'rate_limit:\n  interval: 1s\n  burst: 20\n' | bad
refused "rate_limit" "$WORK/bad.yml" "line 1: rate_limit is not supported"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n' \
    "$WORK/server.crt" "$WORK/server.key" | bad
refused "cipher_suites" "$WORK/bad.yml" "line 4: cipher_suites is not supported"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n  client_ca_file: %s\n' \
    "$WORK/server.crt" "$WORK/server.key" "$WORK/ca.crt" | bad
refused "a client CA without a client_auth_type" "$WORK/bad.yml" "without a client_auth_type"
printf 'tls_server_config: [\n' | bad
refused "not YAML" "$WORK/bad.yml" "line [0-9]+: not YAML"

# A key others may read: a warning, as sshd gives, and the agent runs.
cp "$WORK/server.key" "$WORK/open.key" && chmod 644 "$WORK/open.key"
printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n' "$WORK/server.crt" "$WORK/open.key" >"$WORK/open.yml"
start_serve --web-config "$WORK/open.yml"
check "a key others can read: a warning naming it" \
    grep -q "warning: key_file $WORK/open.key is open to other users (mode 0644): chmod 600 it" "$SERVE_LOG"
