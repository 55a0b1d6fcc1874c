// Kernel fibers: plain blocking functions parked and resumed by the same scheduler.
#include "sim/engine/fiber.hpp"

#include <gtest/gtest.h>
#include <unwind.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/channel.hpp"
#include "sim/engine/delay.hpp"
#include "sim/engine/process.hpp"
#include "sim/engine/semaphore.hpp"
#include "tests/unit/engine/engine_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using Entry = testing::Stamp;
using testing::Log;

TEST(Fiber, BlockingCallsParkAndResumeAtExactTimes) {
  Engine engine;
  Log log;
  engine.spawn_fiber("kernel", [&] {
    log.add("start");
    block_on(delay(10_ns));
    log.add("after 10");
    block_on(delay(5_ns));
    log.add("after 15");
  });
  RunResult result = engine.run();
  EXPECT_EQ(result.reason, StopReason::Idle);
  EXPECT_EQ(log.entries, (std::vector<Entry>{{0_ns, "start"}, {10_ns, "after 10"}, {15_ns, "after 15"}}));
}

// The checks on every wake-up and every switch (their messages built out of line) still name
// the fiber.
TEST(Fiber, AWakeUpTwiceOrASuspendFromOutsideFailsNamingTheFiber) {
  Engine engine;
  Fiber& fiber = engine.spawn_fiber("twice", [] {});  // its start is pending
  try {
    engine.wake(fiber);
    FAIL() << "expected an invariant error";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("actor 'twice' woken twice"), std::string::npos) << e.what();
  }
  try {
    fiber.suspend();
    FAIL() << "expected an invariant error";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("suspend() called from outside fiber 'twice'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(engine.run().reason, StopReason::Idle);  // the fiber still starts, once, and ends
}

TEST(Fiber, StartDelay) {
  Engine engine;
  Log log;
  engine.spawn_fiber("late", [&] { log.add("started"); }, {}, 40_us);
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<Entry>{{40_us, "started"}}));
}

TEST(Fiber, FibersAndProcessesShareSemaphoresAndChannels) {
  Engine engine;
  Semaphore credits(1, "credits");
  Channel<int> wire(1, "wire");
  Log log;
  // A fiber "sender kernel" needs a credit per packet; a coroutine "receiver model" returns it.
  engine.spawn_fiber("sender", [&] {
    for (int i = 0; i < 3; ++i) {
      credits.acquire_blocking();
      wire.put_blocking(i);
      log.add("sent" + std::to_string(i));
    }
  });
  auto receiver = [](Channel<int>& wire, Semaphore& credits, Log& log) -> Process<> {
    for (int i = 0; i < 3; ++i) {
      int packet = co_await wire.get();
      co_await delay(100_ns);
      log.add("done" + std::to_string(packet));
      credits.release();
    }
  };
  engine.spawn(receiver(wire, credits, log), "receiver");
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<Entry>{{0_ns, "sent0"},
                                             {100_ns, "done0"},
                                             {100_ns, "sent1"},
                                             {200_ns, "done1"},
                                             {200_ns, "sent2"},
                                             {300_ns, "done2"}}));
}

TEST(Fiber, ParkedFibersAreUnwoundAtTeardown) {
  int destroyed = 0;
  struct Guard {
    int& counter;
    ~Guard() { ++counter; }
  };
  {
    Engine engine;
    Semaphore never(0, "never");
    for (int i = 0; i < 3; ++i) {
      engine.spawn_fiber("stuck" + std::to_string(i), [&] {
        Guard guard{destroyed};
        never.acquire_blocking();
      });
    }
    RunResult result = engine.run();
    EXPECT_EQ(result.reason, StopReason::Hang);
    EXPECT_EQ(destroyed, 0);
    // `never` is destroyed after the engine here only if declared before it; it is declared
    // after, so the fibers unwind first and their waiter records leave the semaphore cleanly.
  }
  EXPECT_EQ(destroyed, 3);
}

// Raises an exception foreign to C++ (as another language's runtime would): only catch (...)
// catches it, and std::current_exception() is null inside that handler.
[[gnu::noinline]] void raise_foreign_exception() {
  auto* foreign = new _Unwind_Exception{};
  foreign->exception_class = 0x464f524549474e00;  // "FOREIGN"
  foreign->exception_cleanup = [](_Unwind_Reason_Code, _Unwind_Exception* e) { delete e; };
  _Unwind_RaiseException(foreign);
  std::abort();  // returns only when no handler catches it
}

enum class DestroyedIn { NoHandler, CppHandler, ForeignHandler };

// The teardown's unwind runs every cleanup on the way and passes handlers for C++ exceptions
// (a kernel's catch of std::exception must not end it), whether or not the fibers are destroyed
// while the thread handles an exception, a C++ one or a foreign one (there it unwinds by a
// thrown exception instead: libstdc++ terminates when a foreign exception is caught inside
// another handler).
TEST(Fiber, TeardownUnwindsPastHandlersAlsoFromInsideACatch) {
  for (const DestroyedIn in : {DestroyedIn::NoHandler, DestroyedIn::CppHandler, DestroyedIn::ForeignHandler}) {
    const int mode = static_cast<int>(in);
    int destroyed = 0;
    int caught = 0;
    struct Guard {
      int& counter;
      ~Guard() { ++counter; }
    };
    Semaphore never(0, "never");
    auto engine = std::make_unique<Engine>();
    for (int i = 0; i < 3; ++i) {
      engine->spawn_fiber("stuck" + std::to_string(i), [&] {
        Guard outer{destroyed};
        try {
          Guard inner{destroyed};
          never.acquire_blocking();
        } catch (const std::exception&) {
          ++caught;
        }
      });
    }
    EXPECT_EQ(engine->run().reason, StopReason::Hang);
    switch (in) {
      case DestroyedIn::NoHandler: engine.reset(); break;
      case DestroyedIn::CppHandler:
        try {
          throw std::runtime_error("being handled");
        } catch (const std::runtime_error&) {
          engine.reset();
        }
        break;
      case DestroyedIn::ForeignHandler:
        try {
          raise_foreign_exception();
        } catch (...) {
          engine.reset();
        }
        break;
    }
    EXPECT_EQ(engine, nullptr) << "mode " << mode;
    EXPECT_EQ(destroyed, 6) << "mode " << mode;
    EXPECT_EQ(caught, 0) << "mode " << mode;
  }
}

// A fiber that parks again while it is torn down (in a catch (...) handler, which the
// teardown's unwind enters) breaks suspend()'s check; the exception cannot leave the destructor
// that tore the fiber down, and is not dropped either: the program ends naming it.
TEST(FiberDeathTest, AWaitDuringTeardownEndsTheProgramNamingTheFiber) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Semaphore never(0, "never");
        auto engine = std::make_unique<Engine>();
        engine->spawn_fiber("chip0.stubborn", [&] {
          try {
            never.acquire_blocking();
          } catch (...) {
            Fiber::current()->suspend();  // what every blocking call of a kernel ends in
          }
        });
        engine->run();
        engine.reset();
      },
      "fiber 'chip0.stubborn' threw while being torn down: .*tried to wait while being torn down");
}

TEST(Fiber, ExceptionFailsTheRunNamingTheFiber) {
  Engine engine;
  engine.spawn_fiber("chip1.core(1,1).reader", [] {
    block_on(delay(2_ns));
    throw std::runtime_error("address out of L1");
  });
  try {
    engine.run();
    FAIL() << "expected ProcessFailure";
  } catch (const ProcessFailure& failure) {
    EXPECT_EQ(failure.actor_name(), "chip1.core(1,1).reader");
    EXPECT_EQ(failure.when(), 2_ns);
  }
}

TEST(Fiber, BlockingOutsideAFiberIsAnInvariantError) {
  Engine engine;
  Semaphore sem(0);
  EXPECT_THROW(sem.acquire_blocking(), InvariantError);
}

}  // namespace
}  // namespace cclmesh::sim
