-- wrk script: POST one no-op node call per request with the bearer token from the environment.
wrk.method = "POST"
wrk.body = '{"node":"BENCH.NOOP","input":{"query":"agent memory","limit":5}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("DITTO_TRANSPORT_HTTP_WORKER_TOKEN")
