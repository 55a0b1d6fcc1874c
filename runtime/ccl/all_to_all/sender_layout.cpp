#include "runtime/ccl/all_to_all/sender_layout.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/kernel_args.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::all_to_all {
namespace {

// Senders per link: slots a chip's up and down senders take at most, with `cap` per direction.
std::uint32_t slots_per_link(CclTopology shape, std::uint32_t n, std::uint32_t cap) {
  if (cap == 1) return 2;  // up at 0, down at 1: the per-direction layout's cores
  if (shape == CclTopology::Ring) return 2 * std::min(cap, n / 2);
  std::uint32_t most = 0;
  for (std::uint32_t p = 0; p < n; ++p) most = std::max(most, std::min(cap, n - 1 - p) + std::min(cap, p));
  return most;
}

// Destinations one way from the chip with the most: a ring's n/2 (the split farthest chunk's
// half included), a line's end chip's n - 1.
std::uint32_t needed_per_direction(CclTopology shape, std::uint32_t n) {
  return shape == CclTopology::Ring ? n / 2 : n - 1;
}

SenderPlan plan_with_cap(SenderLayout layout, CclTopology shape, std::uint32_t n, std::uint32_t num_links,
                         std::uint32_t cap) {
  SenderPlan plan;
  plan.layout = layout;
  plan.senders_per_direction = cap;
  plan.needed_per_direction = layout == SenderLayout::PerDirection ? 1 : needed_per_direction(shape, n);
  plan.slots_per_link = slots_per_link(shape, n, cap);
  plan.num_links = num_links;
  plan.muxes = cap > 1;
  return plan;
}

}  // namespace

std::string to_string(SenderLayout layout) {
  switch (layout) {
    case SenderLayout::Auto:
      return "auto";
    case SenderLayout::PerDirection:
      return "per-direction";
    case SenderLayout::PerDestination:
      return "per-destination";
  }
  return "?";
}

std::vector<Send> sends_of(const FabricGroup& g, std::uint32_t position, bool up) {
  const std::uint32_t n = g.size();
  std::vector<Send> sends;
  if (g.topology == CclTopology::Line) {
    const std::uint32_t reach = up ? g.reach_up(position) : g.reach_down(position);
    for (std::uint32_t d = reach; d >= 1; --d) sends.push_back(Send{up ? position + d : position - d, std::nullopt});
    return sends;
  }
  if (n % 2 == 0) sends.push_back(Send{(position + n / 2) % n, up ? 0u : 1u});
  for (std::uint32_t d = (n - 1) / 2; d >= 1; --d) {
    sends.push_back(Send{up ? (position + d) % n : (position + n - d) % n, std::nullopt});
  }
  return sends;
}

SenderPlan plan_senders(SenderLayout layout, CclTopology shape, std::uint32_t n, std::uint32_t num_links,
                        std::uint32_t available_cores) {
  if (layout == SenderLayout::PerDirection) return plan_with_cap(layout, shape, n, num_links, 1);
  const std::uint32_t most = std::min(needed_per_direction(shape, n), kernels::fabric_mux::kMaxClients);
  for (std::uint32_t cap = most; cap > 1; --cap) {
    const SenderPlan plan = plan_with_cap(SenderLayout::PerDestination, shape, n, num_links, cap);
    if (plan.core_count() <= available_cores) return plan;
  }
  return plan_with_cap(SenderLayout::PerDestination, shape, n, num_links, 1);
}

std::vector<Sender> senders_at(const FabricGroup& g, std::uint32_t position, const SenderPlan& plan) {
  std::vector<Sender> senders;
  std::uint32_t next_slot = 0;
  for (const bool up : {true, false}) {
    const std::vector<Send> sends = sends_of(g, position, up);
    const auto count = std::min<std::uint32_t>(plan.senders_per_direction, static_cast<std::uint32_t>(sends.size()));
    // Per direction keeps its cores (up at 0, down at 1) whether or not the chip sends both ways.
    if (plan.senders_per_direction == 1) next_slot = up ? 0 : 1;
    for (std::uint32_t s = 0; s < count; ++s) {
      Sender sender{up, next_slot++, {}};
      for (std::uint32_t i = s; i < sends.size(); i += count) sender.sends.push_back(sends[i]);
      senders.push_back(std::move(sender));
    }
  }
  for (const Sender& s : senders) {
    CCLMESH_CHECK(s.slot < plan.slots_per_link, "an all_to_all sender's slot lies inside its link's slots");
  }
  return senders;
}

SenderLayoutChoice sender_layout_choice(SenderLayout asked, CclTopology shape, std::uint32_t n,
                                        std::uint32_t num_links, std::uint32_t available_cores,
                                        std::uint64_t bytes_per_chip) {
  if (asked == SenderLayout::Auto && bytes_per_chip < kPerDestinationMinBytes) {
    return {plan_senders(SenderLayout::PerDirection, shape, n, num_links, available_cores),
            fmt::format("auto: per-direction, {} B per chip are below the {} B from which one sender per destination "
                        "gains more than its fabric mux costs",
                        bytes_per_chip, kPerDestinationMinBytes)};
  }
  const SenderPlan plan = plan_senders(asked, shape, n, num_links, available_cores);
  if (asked == SenderLayout::PerDirection) {
    return {plan, "asked for: per-direction, one up and one down sender per link"};
  }
  const std::string prefix = asked == SenderLayout::Auto ? "auto: per-destination" : "asked for: per-destination";
  const std::uint32_t per_chip = shape == CclTopology::Ring ? 2 * (n / 2) : n - 1;
  if (plan.needed_per_direction == 1) {
    return {plan,
            fmt::format("{}, which on a {} of {} chips is one sender per direction", prefix, to_string(shape), n)};
  }
  if (!plan.capped()) {
    return {plan, fmt::format("{}, {} senders a chip per link, each direction's sharing the router through a fabric "
                              "mux (REFERENCE 7.6, 6.3)",
                              prefix, per_chip)};
  }
  const std::string why =
      plan.senders_per_direction == kernels::fabric_mux::kMaxClients
          ? fmt::format("a fabric mux takes at most {} clients", kernels::fabric_mux::kMaxClients)
          : fmt::format("{} link{}' senders, local-copy workers and muxes must fit the {} worker cores from the "
                        "first on",
                        num_links, num_links == 1 ? "" : "s", available_cores);
  return {plan, fmt::format("{}, capped at {} sender{} per link and direction (of {}: {}), some with several "
                            "destinations",
                            prefix, plan.senders_per_direction, plan.senders_per_direction == 1 ? "" : "s",
                            plan.needed_per_direction, why)};
}

}  // namespace cclmesh::runtime::ccl::all_to_all
