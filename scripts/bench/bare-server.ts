// Baseline for the benchmarks: bare Bun.serve answering GET / with the same JSON body.
const body = JSON.stringify({ status: "ok", service: "corpus", version: "0.1.0" });
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  fetch: () => new Response(body, { headers: { "content-type": "application/json;charset=utf-8" } }),
});
console.log(server.url.href);
