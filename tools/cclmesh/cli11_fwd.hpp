#pragma once
// CLI11's App and Option, declared for the headers that only take them by reference. CLI11 is
// header-only and its header defines validator objects that every including object constructs
// and compiles again (~4 s each at -O3), so only the .cpp files that build options include
// <CLI/CLI.hpp> (docs/performance.md, "Build time").

namespace CLI {
class App;
class Option;
}  // namespace CLI
