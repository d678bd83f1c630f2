# The rooms of the source tree, lowest first: a room is a folder with one
# job, and it includes only itself and the rooms its ROOM_<room> line names,
# all below it, so dependencies point one way.  Declared here only:
# tools/check_layout.py checks every #include against these lines, the
# Makefile links server/'s rooms in this order, and docs/architecture.md's
# table of rooms lists them in this order (make test-layout checks it).
ROOMS := core server/base server/web server/setup server/obs \
         server/request server/json server/oip server/api server/http \
         server/main.c tools

# the attention maths and the thread pool: no HTTP, no JSON
ROOM_core :=
# buffers, replies, problem+json, the memory budget, limits
ROOM_server/base := core
# the embedded assets' declarations
ROOM_server/web :=
# configuration, BLAS and allocator set-up
ROOM_server/setup := core server/base
# metrics and the access log
ROOM_server/obs := server/base
# the request model: the schema table, its rules, result shaping; no JSON
# type (jansson and simdjson are not included here), no HTTP
ROOM_server/request := core server/base
# the /v1 codec: parsers, decode, encode, the number writer
ROOM_server/json := core server/base server/request
# the Open Inference Protocol's reader and writer (/v2)
ROOM_server/oip := core server/base server/request server/json
# one file per endpoint
ROOM_server/api := core server/base server/web server/setup server/obs \
                   server/request server/json server/oip
# libmicrohttpd: daemon, routes, guards, deadlines
ROOM_server/http := core server/base server/web server/setup server/obs \
                    server/api
# wires them together
ROOM_server/main.c := core server/base server/setup server/obs server/http
# build-time generators (the page's field list and the contract read the
# schema table; the docs' table of limits the table of options)
ROOM_tools := core server/base server/request server/setup
