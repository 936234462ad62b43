#!/usr/bin/env bash
# Container health check: exit 0 when `GET URL` answers 200, 1 otherwise.
#
#   skillreg-healthcheck [URL]     # default http://127.0.0.1:<port of $SKILLREG_LISTEN>/healthz
#
# The runtime image (debian:bookworm-slim) has neither curl nor wget, so this speaks HTTP/1.1
# over bash's /dev/tcp. Only plain http:// URLs. The Dockerfile installs it as
# /usr/local/bin/skillreg-healthcheck; docker-compose.yml points it at /readyz.
set -uo pipefail

listen="${SKILLREG_LISTEN:-127.0.0.1:8080}"
url="${1:-http://127.0.0.1:${listen##*:}/healthz}"

fail() {
    echo "unhealthy: $url: $*"
    exit 1
}

rest="${url#http://}"
[[ "$rest" != "$url" ]] || fail "not an http:// URL"
authority="${rest%%/*}"
if [[ "$rest" == */* ]]; then path="/${rest#*/}"; else path=/; fi
if [[ "$authority" == \[*\]* ]]; then # [::1]:8080
    host="${authority%%]*}"
    host="${host#[}"
    port="${authority##*]}"
    port="${port#:}"
elif [[ "$authority" == *:* ]]; then
    host="${authority%:*}"
    port="${authority##*:}"
else
    host="$authority"
    port=""
fi
port="${port:-80}"
[[ -n "$host" && "$port" =~ ^[0-9]+$ ]] || fail "cannot parse host and port"

{ exec 3<>"/dev/tcp/$host/$port"; } 2>/dev/null || fail "cannot connect"
printf 'GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: skillreg-healthcheck\r\nConnection: close\r\n\r\n' \
    "$path" "$authority" >&3 || fail "cannot send the request"
IFS=' ' read -r -t 5 _ status _ <&3 || fail "no answer within 5 s"
status="${status%$'\r'}"
exec 3<&-
[[ "$status" == 200 ]] || fail "HTTP status ${status:-none}"
echo "healthy: $url"
