#include "sim/model/eth_link.hpp"

#include <fmt/format.h>

#include "sim/engine/check.hpp"
#include "sim/model/eth_core.hpp"

namespace cclmesh::sim {

EthLink::EthLink(EthCore& a, EthCore& b, Bandwidth rate, SimTime latency)
    : a_(a), b_(b), a_to_b_(rate, latency), b_to_a_(rate, latency) {
  CCLMESH_CHECK(&a != &b, "an ethernet link needs two different cores");
  CCLMESH_CHECK(rate.bytes_per_second() > 0, "an ethernet link needs a positive rate");
}

EthWire& EthLink::wire_from(const EthCore& sender) {
  CCLMESH_CHECK(&sender == &a_ || &sender == &b_, "core " + sender.name() + " is not on this link");
  return &sender == &a_ ? a_to_b_ : b_to_a_;
}

const EthWire& EthLink::wire_from(const EthCore& sender) const {
  CCLMESH_CHECK(&sender == &a_ || &sender == &b_, "core " + sender.name() + " is not on this link");
  return &sender == &a_ ? a_to_b_ : b_to_a_;
}

void EthLink::set_up(bool up) {
  a_to_b_.up_ = up;
  b_to_a_.up_ = up;
}

void EthLink::scale_rate(std::int64_t numerator, std::int64_t denominator) {
  CCLMESH_CHECK(numerator > 0 && denominator > 0, fmt::format("bad link rate scale {}/{}", numerator, denominator));
  for (EthWire* wire : {&a_to_b_, &b_to_a_}) {
    __extension__ typedef __int128 Wide;
    const Wide scaled = static_cast<Wide>(wire->nominal_rate_.bytes_per_second()) * numerator / denominator;
    CCLMESH_CHECK(scaled > 0, "a scaled link rate must stay positive");
    wire->rate_ = Bandwidth::bytes_per_second(static_cast<std::int64_t>(scaled));
  }
}

void EthLink::set_frame_faults(const FrameFaultRates& rates) {
  frame_faults_ = rates;
  frame_random_.seed(rates.seed);
}

FrameFate EthLink::draw_fate(std::int64_t frames) {
  if (!frame_faults_) return FrameFate::Delivered;
  FrameFate fate = FrameFate::Delivered;
  for (std::int64_t f = 0; f < frames; ++f) {
    // Two draws per frame, always, so one kind's rate does not shift the other's sequence.
    const bool lost = (frame_random_() >> 32) < frame_faults_->drop_per_2p32;
    const bool copied = (frame_random_() >> 32) < frame_faults_->dup_per_2p32;
    if (lost) {
      ++frames_dropped_;
      fate = FrameFate::Dropped;
    } else if (copied) {
      ++frames_duplicated_;
      if (fate == FrameFate::Delivered) fate = FrameFate::Duplicated;
    }
  }
  return fate;
}

}  // namespace cclmesh::sim
