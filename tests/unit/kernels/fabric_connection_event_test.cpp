// The connection_live word's decision table (api::connection_event()), shared by the fabric
// router and the fabric mux, and the WORKER_PROTOCOL_VIOLATION detail and its report.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/host/kernel_args_builder.hpp"

namespace {

using namespace cclmesh;
using api::ConnectionEvent;
using api::connection_event;

TEST(ConnectionEvent, ValuesAreUnusedOpenAndCloseRequest) {
  EXPECT_EQ(api::kConnectionUnused, 0u);
  EXPECT_EQ(api::kConnectionOpen, 1u);
  EXPECT_EQ(api::kConnectionCloseRequest, 2u);
}

TEST(ConnectionEvent, UnusedAsksForNothing) {
  EXPECT_EQ(connection_event(api::kConnectionUnused, false), ConnectionEvent::NONE);
  EXPECT_EQ(connection_event(api::kConnectionUnused, true), ConnectionEvent::NONE);
}

TEST(ConnectionEvent, OpenConnectsOnce) {
  EXPECT_EQ(connection_event(api::kConnectionOpen, false), ConnectionEvent::OPEN);
  EXPECT_EQ(connection_event(api::kConnectionOpen, true), ConnectionEvent::NONE);
}

// A close request on a channel the router never saw open: the worker opened and closed
// between two passes, and is acknowledged all the same.
TEST(ConnectionEvent, ACloseRequestIsAcknowledgedWhetherOrNotTheOpenWasSeen) {
  EXPECT_EQ(connection_event(api::kConnectionCloseRequest, true), ConnectionEvent::CLOSE);
  EXPECT_EQ(connection_event(api::kConnectionCloseRequest, false), ConnectionEvent::OPEN_AND_CLOSE);
}

TEST(ConnectionEvent, AnyOtherValueIsAProtocolViolation) {
  for (const uint32_t live : {3u, 7u, 0x100u, 0xFFFFFFFFu}) {
    EXPECT_EQ(connection_event(live, false), ConnectionEvent::PROTOCOL_VIOLATION) << live;
    EXPECT_EQ(connection_event(live, true), ConnectionEvent::PROTOCOL_VIOLATION) << live;
  }
}

TEST(ProtocolViolationDetail, CarriesTheChannelAndTheValue) {
  EXPECT_EQ(api::protocol_violation_overrun_detail(5), 5u);
  EXPECT_EQ(api::protocol_violation_live_value(api::protocol_violation_overrun_detail(5)), 0u);
  const uint32_t bad = api::protocol_violation_live_detail(1, 7);
  EXPECT_EQ(api::protocol_violation_channel(bad), 1u);
  EXPECT_EQ(api::protocol_violation_live_value(bad), 7u);
  const uint32_t huge = api::protocol_violation_live_detail(3, 0xDEADBEEF);
  EXPECT_EQ(api::protocol_violation_channel(huge), 3u);
  EXPECT_EQ(api::protocol_violation_live_value(huge), api::kProtocolViolationValueMax);
}

std::string describe(uint32_t detail) {
  return kargs::describe_kernel_fault("fabric_router", {},
                                      api::fault_code(api::KernelFaultCode::WORKER_PROTOCOL_VIOLATION),
                                      api::kFaultNoCommand, detail);
}

TEST(ProtocolViolationDetail, TheReportSaysWhatTheWorkerDid) {
  EXPECT_NE(describe(api::protocol_violation_overrun_detail(1))
                .find(", detail 1: channel 1's worker overran its credits (more packets or buffers than the channel gave it)"),
            std::string::npos)
      << describe(1);
  const std::string bad = describe(api::protocol_violation_live_detail(0, 7));
  EXPECT_NE(bad.find(", detail 1792: channel 0's connection_live word reads 7, none of 0 (unused), 1 (open), 2 "
                     "(close request)"),
            std::string::npos)
      << bad;
  const std::string huge = describe(api::protocol_violation_live_detail(2, 0xDEADBEEF));
  EXPECT_NE(huge.find("channel 2's connection_live word reads 16777215 or more"), std::string::npos) << huge;
}

}  // namespace
