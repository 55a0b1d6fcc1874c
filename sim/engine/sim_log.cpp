#include "sim/engine/sim_log.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>

#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

namespace {

// %* in the pattern: the simulated time, or "-" outside a simulation.
class SimTimeFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    const Engine* engine = Engine::current_or_null();
    const std::string text = engine != nullptr ? to_string(engine->now()) : std::string("-");
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<SimTimeFlag>(); }
};

spdlog::level::level_enum initial_level() {
  const char* env = std::getenv("CCLMESH_LOG");
  if (env == nullptr || *env == '\0') return spdlog::level::warn;
  return spdlog::level::from_str(env);
}

std::mutex registry_mutex;
spdlog::level::level_enum current_level = initial_level();

}  // namespace

std::shared_ptr<spdlog::logger> sim_logger(const std::string& subsystem) {
  std::lock_guard lock(registry_mutex);
  const std::string name = "cclmesh." + subsystem;
  if (auto existing = spdlog::get(name)) return existing;
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>(name, sink);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<SimTimeFlag>('*').set_pattern("[%*] [%n] [%l] %v");
  logger->set_formatter(std::move(formatter));
  logger->set_level(current_level);
  spdlog::register_logger(logger);
  return logger;
}

void set_sim_log_level(spdlog::level::level_enum level) {
  std::lock_guard lock(registry_mutex);
  current_level = level;
  spdlog::apply_all([level](const std::shared_ptr<spdlog::logger>& logger) {
    if (logger->name().rfind("cclmesh.", 0) == 0) logger->set_level(level);
  });
}

}  // namespace cclmesh::sim
