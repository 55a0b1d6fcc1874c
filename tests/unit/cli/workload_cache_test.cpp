// The run's program cache (tools/cclmesh/workload_cache.hpp): a request with the params and the
// topology of the last one takes its workloads without building; any difference builds again.
#include "tools/cclmesh/workload_cache.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

struct FakeParams {
  int size = 1;
  bool operator==(const FakeParams&) const = default;
};
struct OtherParams {
  int size = 1;
  bool operator==(const OtherParams&) const = default;
};

// A builder that counts its calls and names its workload after them.
struct CountingBuild {
  int* builds;
  runtime::MeshWorkload operator()() const {
    ++*builds;
    return runtime::MeshWorkload{"build " + std::to_string(*builds), {}};
  }
};

TEST(WorkloadCache, EqualParamsOnTheSameTopologyTakeTheWorkloadsBuilt) {
  const topo::Topology t3k = topo::load_system("t3k");
  WorkloadCache cache;
  int builds = 0;
  const WorkloadCache::Workloads first = cache.get(FakeParams{4}, t3k, CountingBuild{&builds});
  const WorkloadCache::Workloads second = cache.get(FakeParams{4}, topo::load_system("t3k"), CountingBuild{&builds});
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(first, second);
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ(second->front().name, "build 1");
}

TEST(WorkloadCache, OtherParamsAnotherParamsTypeOrAnotherTopologyBuildAgain) {
  const topo::Topology t3k = topo::load_system("t3k");
  WorkloadCache cache;
  int builds = 0;
  cache.get(FakeParams{4}, t3k, CountingBuild{&builds});
  EXPECT_EQ(cache.get(FakeParams{5}, t3k, CountingBuild{&builds})->front().name, "build 2");
  EXPECT_EQ(cache.get(OtherParams{5}, t3k, CountingBuild{&builds})->front().name, "build 3");
  EXPECT_EQ(cache.get(OtherParams{5}, topo::load_system("n300"), CountingBuild{&builds})->front().name, "build 4");
  EXPECT_EQ(cache.get(OtherParams{5}, t3k.renamed("t3k copy"), CountingBuild{&builds})->front().name, "build 5");
  EXPECT_EQ(cache.hits(), 0u);
  // The last entry is the one kept.
  EXPECT_EQ(cache.get(OtherParams{5}, t3k.renamed("t3k copy"), CountingBuild{&builds})->front().name, "build 5");
  EXPECT_EQ(cache.hits(), 1u);
}

// A builder of another kind for the same params (all_gather's build and build_workloads both
// take all_gather::Params) never answers for the first: the builder's type is part of the key.
// (The same counting, another type.)
struct OtherBuild : CountingBuild {};

TEST(WorkloadCache, AnotherBuilderForTheSameParamsBuildsAgain) {
  const topo::Topology t3k = topo::load_system("t3k");
  WorkloadCache cache;
  int builds = 0;
  cache.get(FakeParams{4}, t3k, CountingBuild{&builds});
  EXPECT_EQ(cache.get(FakeParams{4}, t3k, OtherBuild{{&builds}})->front().name, "build 2");
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_EQ(cache.get(FakeParams{4}, t3k, OtherBuild{{&builds}})->front().name, "build 2");
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(WorkloadCache, ABuildThatThrowsLeavesTheEntryBefore) {
  const topo::Topology t3k = topo::load_system("t3k");
  WorkloadCache cache;
  int builds = 0;
  cache.get(FakeParams{4}, t3k, CountingBuild{&builds});
  EXPECT_THROW(cache.get(FakeParams{5}, t3k, []() -> runtime::MeshWorkload { throw std::invalid_argument("bad"); }),
               std::invalid_argument);
  EXPECT_EQ(cache.get(FakeParams{4}, t3k, CountingBuild{&builds})->front().name, "build 1");
  // And the failed params are not taken as built.
  EXPECT_EQ(cache.get(FakeParams{5}, t3k, CountingBuild{&builds})->front().name, "build 2");
}

TEST(WorkloadCache, AllOfABuildsWorkloadsAreKept) {
  const topo::Topology t3k = topo::load_system("t3k");
  WorkloadCache cache;
  const auto two = [] {
    return std::vector<runtime::MeshWorkload>{runtime::MeshWorkload{"reduce_scatter", {}},
                                              runtime::MeshWorkload{"all_gather", {}}};
  };
  cache.get(FakeParams{}, t3k, two);
  const WorkloadCache::Workloads kept = cache.get(FakeParams{}, t3k, two);
  ASSERT_EQ(kept->size(), 2u);
  EXPECT_EQ(kept->at(0).name, "reduce_scatter");
  EXPECT_EQ(kept->at(1).name, "all_gather");
  EXPECT_EQ(cache.hits(), 1u);
}

}  // namespace
}  // namespace cclmesh::cli
