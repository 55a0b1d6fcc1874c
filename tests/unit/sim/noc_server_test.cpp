// A NoC link or target NIU serves a packet in an idle gap before a later reservation
// (sim/model/noc_server.hpp): the gap rule, the bound on the reserved intervals, pruning by
// engine now, and the statistics.

#include "sim/model/noc_server.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {
namespace {

constexpr std::int64_t kNow = 0;

// Every reserved interval, oldest first: the earlier ones, then the latest.
std::vector<std::pair<std::int64_t, std::int64_t>> intervals(const NocServer& server) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int32_t i = 0; i < server.earlier_count; ++i) {
    out.emplace_back(server.earlier[static_cast<std::size_t>(i)].begin_ps,
                     server.earlier[static_cast<std::size_t>(i)].end_ps);
  }
  if (server.free_at.ps() > server.latest_begin_ps) out.emplace_back(server.latest_begin_ps, server.free_at.ps());
  return out;
}

using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

TEST(NocServer, AnIdleServerStartsAPacketAtItsHead) {
  NocServer server;
  EXPECT_EQ(reserve(server, 100, 50, kNow), 100);
  EXPECT_EQ(server.free_at, SimTime::from_ps(150));
  EXPECT_EQ(intervals(server), (Intervals{{100, 150}}));
}

TEST(NocServer, BackToBackPacketsAreOneInterval) {
  NocServer server;
  reserve(server, 100, 50, kNow);
  EXPECT_EQ(reserve(server, 120, 50, kNow), 150);  // waits for the first: no gap before it
  EXPECT_EQ(reserve(server, 200, 50, kNow), 200);  // head exactly at the end
  EXPECT_EQ(intervals(server), (Intervals{{100, 250}}));
  EXPECT_EQ(server.free_at, SimTime::from_ps(250));
}

TEST(NocServer, APacketFillsAGapBeforeALaterReservation) {
  NocServer server;
  reserve(server, 100, 100, kNow);  // [100, 200)
  reserve(server, 500, 100, kNow);  // [500, 600): booked early, far in the future
  // Booked later, its head arrives at 250 while the server is idle: it goes first.
  EXPECT_EQ(reserve(server, 250, 100, kNow), 250);
  EXPECT_EQ(intervals(server), (Intervals{{100, 200}, {250, 350}, {500, 600}}));
  EXPECT_EQ(server.free_at, SimTime::from_ps(600));  // still the end of the latest reservation
  // A head inside a reservation starts at its end, if it fits before the next.
  EXPECT_EQ(reserve(server, 120, 50, kNow), 200);
  EXPECT_EQ(intervals(server), (Intervals{{100, 250 + 100}, {500, 600}}));
  // Exactly filling the rest of the gap joins the two.
  EXPECT_EQ(reserve(server, 350, 150, kNow), 350);
  EXPECT_EQ(intervals(server), (Intervals{{100, 600}}));
}

TEST(NocServer, APacketThatDoesNotFitTheGapWaitsForTheNextOne) {
  NocServer server;
  reserve(server, 100, 100, kNow);  // [100, 200)
  reserve(server, 500, 100, kNow);  // [500, 600)
  reserve(server, 700, 100, kNow);  // [700, 800)
  // 300 long from 250: 550 > 500, and [600, 700) is too short too, so after the last.
  EXPECT_EQ(reserve(server, 250, 300, kNow), 800);
  EXPECT_EQ(server.free_at, SimTime::from_ps(1100));
  // 100 long from 250 fits the first gap; another 100 from 560 fits [600, 700).
  EXPECT_EQ(reserve(server, 250, 100, kNow), 250);
  EXPECT_EQ(reserve(server, 560, 100, kNow), 600);
  EXPECT_EQ(intervals(server), (Intervals{{100, 200}, {250, 350}, {500, 1100}}));
}

TEST(NocServer, ReservationsThatEndedByNowAreDroppedWhenRoomIsNeeded) {
  NocServer server;
  for (std::int64_t i = 0; i < NocServer::kReservedIntervals; ++i) reserve(server, 100 * (2 * i + 1), 100, kNow);
  ASSERT_EQ(intervals(server).size(), 4u);  // [100,200) [300,400) [500,600) [700,800)
  // At now = 400 the first two have ended: a new one drops them instead of merging anything.
  EXPECT_EQ(reserve(server, 900, 100, 400), 900);
  EXPECT_EQ(intervals(server), (Intervals{{500, 600}, {700, 800}, {900, 1000}}));
  // Once the last has ended, the next reservation is the only one.
  EXPECT_EQ(reserve(server, 1500, 100, 1200), 1500);
  EXPECT_EQ(intervals(server), (Intervals{{1500, 1600}}));
}

TEST(NocServer, AFullSetMergesItsTwoOldestAndLosesOnlyTheirGap) {
  NocServer server;
  for (std::int64_t i = 0; i < NocServer::kReservedIntervals; ++i) reserve(server, 100 * (2 * i + 1), 100, kNow);
  // A fifth disjoint reservation, nothing ended: [100,200) and [300,400) become [100,400).
  EXPECT_EQ(reserve(server, 900, 100, kNow), 900);
  EXPECT_EQ(intervals(server), (Intervals{{100, 400}, {500, 600}, {700, 800}, {900, 1000}}));
  // The gap at [200, 300) is gone: a packet there waits for the next gap that fits.
  EXPECT_EQ(reserve(server, 200, 100, kNow), 400);
  EXPECT_EQ(intervals(server), (Intervals{{100, 600}, {700, 800}, {900, 1000}}));
  // The later gaps are kept.
  EXPECT_EQ(reserve(server, 600, 50, kNow), 600);
  EXPECT_EQ(intervals(server), (Intervals{{100, 650}, {700, 800}, {900, 1000}}));
}

TEST(NocServer, AFullSetMergesItsOldestBeforeInsertingIntoAGap) {
  NocServer server;
  for (std::int64_t i = 0; i < NocServer::kReservedIntervals; ++i) reserve(server, 100 * (2 * i + 1), 100, kNow);
  // A packet for the last gap, [600, 700), while the set is full and nothing has ended.
  EXPECT_EQ(reserve(server, 610, 50, kNow), 610);
  EXPECT_EQ(intervals(server), (Intervals{{100, 400}, {500, 600}, {610, 660}, {700, 800}}));
}

TEST(NocServer, AHeadBeforeNowIsABug) {
  NocServer server;
  reserve(server, 100, 100, kNow);
  reserve(server, 500, 100, kNow);
  EXPECT_THROW(reserve(server, 250, 10, 300), InvariantError);
}

TEST(NocServer, StatisticsSumEachPacketsOwnSerialisation) {
  NocServer server;
  const BusyWindow window{SimTime::from_ps(150), SimTime::from_ps(560)};
  const SimTime now = SimTime::zero();
  const auto send = [&](std::int64_t head, std::int64_t serial, std::int64_t bytes) {
    return pass_through_gap(server, SimTime::from_ps(serial), PacketFront::at(SimTime::from_ps(head)), bytes, window,
                            now);
  };
  EXPECT_EQ(send(100, 100, 64).head, SimTime::from_ps(100));  // [100, 200): 50 in the window
  EXPECT_EQ(send(500, 100, 32).head, SimTime::from_ps(500));  // [500, 600): 60 in the window
  const PacketFront gap = send(250, 100, 16);                 // [250, 350): all 100 in the window
  EXPECT_EQ(gap.head, SimTime::from_ps(250));
  EXPECT_EQ(gap.tail, SimTime::from_ps(350));
  EXPECT_EQ(server.packets, 3);
  EXPECT_EQ(server.bytes, 64 + 32 + 16);
  EXPECT_EQ(server.busy, SimTime::from_ps(300));
  EXPECT_EQ(server.busy_in_window, SimTime::from_ps(50 + 60 + 100));
  // A tail stretched upstream leaves later than the server's own serialisation; the server is
  // held only for the latter.
  const PacketFront stretched = pass_through_gap(server, SimTime::from_ps(50), PacketFront{SimTime::from_ps(360),
                                                 SimTime::from_ps(480)}, 8, window, now);
  EXPECT_EQ(stretched.head, SimTime::from_ps(360));
  EXPECT_EQ(stretched.tail, SimTime::from_ps(480));
  EXPECT_EQ(intervals(server), (Intervals{{100, 200}, {250, 350}, {360, 410}, {500, 600}}));
}

}  // namespace
}  // namespace cclmesh::sim
