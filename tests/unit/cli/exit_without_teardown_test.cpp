// A run's device is kept to the exit (never destroyed) only in the CLI's own process, at its
// last run, without a trace and outside sanitizer builds; everywhere else it is destroyed when the
// run ends, as before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <utility>

#include "tests/unit/runtime/mock_mesh_device.hpp"
#include "tools/cclmesh/exit_without_teardown.hpp"

namespace cclmesh::cli {
namespace {

class CountedDevice : public runtime::testing::MockMeshDevice {
 public:
  explicit CountedDevice(int& destroyed) : destroyed_(destroyed) {}
  ~CountedDevice() override { ++destroyed_; }

 private:
  int& destroyed_;
};

// One test: the switches are the process's and are never turned back, so the order is the point.
TEST(ExitWithoutTeardown, OnlyTheCliProcesssLastUntracedRunKeepsItsDevice) {
  int destroyed = 0;
  // A library caller or an in-process test (main() never ran): destroyed.
  finish_with_device(std::make_unique<CountedDevice>(destroyed), false);
  EXPECT_EQ(destroyed, 1);
  // The CLI running more than one op in its process (a sequential sweep): each op's device goes
  // before the next is built.
  allow_exit_without_teardown();
  finish_with_device(std::make_unique<CountedDevice>(destroyed), false);
  EXPECT_EQ(destroyed, 2);
  // Its last run, but with a trace recorder: the device's close() records its last faults there.
  process_exits_after_its_run();
  finish_with_device(std::make_unique<CountedDevice>(destroyed), true);
  EXPECT_EQ(destroyed, 3);
  // Its last run without a trace: kept, the process exits next.
  auto last = std::make_unique<CountedDevice>(destroyed);
  ::testing::Mock::AllowLeak(last.get());  // gmock would report the kept mock at exit
  finish_with_device(std::move(last), false);
#if defined(CCLMESH_ASAN) || defined(__SANITIZE_ADDRESS__)
  EXPECT_EQ(destroyed, 4);  // but never under a sanitizer: the leak check must see the teardown
#else
  EXPECT_EQ(destroyed, 3);
#endif
}

}  // namespace
}  // namespace cclmesh::cli
