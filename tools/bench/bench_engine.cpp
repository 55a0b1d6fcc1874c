// Engine throughput (Google Benchmark; not a test): events per second for a timer chain, a
// ping-pong of two processes through channels, and fiber park/resume per second.
//   make bench    or    build/tools/bench/bench_engine
#include <benchmark/benchmark.h>

#include "sim/engine/channel.hpp"
#include "sim/engine/delay.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/process.hpp"

namespace {
using namespace cclmesh::sim;
using namespace cclmesh::sim::literals;

Process<> timer_chain(std::int64_t steps) {
  for (std::int64_t i = 0; i < steps; ++i) co_await delay(1_ns);
}

void BM_TimerChain(benchmark::State& state) {
  const std::int64_t steps = state.range(0);
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine engine;
    engine.spawn(timer_chain(steps), "chain");
    engine.run();
    events += engine.stats().events_executed;
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TimerChain)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

Process<> pinger(Channel<int>& out, Channel<int>& in, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    co_await out.put(i);
    (void)co_await in.get();
  }
}

Process<> ponger(Channel<int>& in, Channel<int>& out, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    int value = co_await in.get();
    co_await delay(1_ns);
    co_await out.put(value);
  }
}

void BM_ChannelPingPong(benchmark::State& state) {
  const int rounds = static_cast<int>(state.range(0));
  std::uint64_t events = 0;
  for (auto _ : state) {
    Engine engine;
    Channel<int> a(1, "a");
    Channel<int> b(1, "b");
    engine.spawn(pinger(a, b, rounds), "ping");
    engine.spawn(ponger(a, b, rounds), "pong");
    engine.run();
    events += engine.stats().events_executed;
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ChannelPingPong)->Arg(500'000)->Unit(benchmark::kMillisecond);

void BM_FiberParkResume(benchmark::State& state) {
  const std::int64_t steps = state.range(0);
  std::uint64_t switches = 0;
  for (auto _ : state) {
    Engine engine;
    engine.spawn_fiber("kernel", [steps] {
      for (std::int64_t i = 0; i < steps; ++i) block_on(delay(1_ns));
    });
    engine.run();
    switches += static_cast<std::uint64_t>(steps);
  }
  state.counters["park+resume/s"] = benchmark::Counter(static_cast<double>(switches), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FiberParkResume)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
