#!/bin/bash
# attention-healthcheck - exit 0 when the server in this container answers GET /healthz with 200.
#
# The image has no HTTP client (the server has no client mode and curl would add megabytes), so this speaks
# HTTP/1.1 over bash's /dev/tcp. The port comes from ATTENTION_LISTEN (HOST:PORT); a wildcard host is probed on
# loopback. The caller (Docker's HEALTHCHECK --timeout) bounds the whole probe; `read -t` bounds the answer too.
set -u
listen=${ATTENTION_LISTEN:-0.0.0.0:8080}
port=${listen##*:}
host=${listen%:*}
host=${host#[}
host=${host%]}
case $host in
'' | 0.0.0.0 | '*') host=127.0.0.1 ;;
::) host=::1 ;;
esac
if ! exec 3<>"/dev/tcp/$host/$port"; then
    echo "unhealthy: nothing listens on $host:$port" >&2
    exit 1
fi
printf 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: attention-healthcheck\r\nConnection: close\r\n\r\n' >&3
status=
IFS=$' \r' read -r -t 2 _ status _ <&3
if [ "$status" = 200 ]; then
    exit 0
fi
echo "unhealthy: GET /healthz answered ${status:-nothing}" >&2
exit 1
