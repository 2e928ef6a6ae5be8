//===- DslBench.cpp - Front-end speed on the library and on large files ---===//
//
// Prints the parse+check time of every algorithm in the library (median of
// repeated runs; the goal is well under 10 ms each) and of generated files
// of 1k, 10k and 100k lines, with the time per line so that it shows whether
// the front end stays linear in the size of its input.
//
//===----------------------------------------------------------------------===//

#include "../unit/DslTestSupport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace cclc;

namespace {

/// Median wall time in microseconds of Runs parse+check passes over Text.
double medianMicros(const std::string &Name, const std::string &Text, unsigned Runs) {
  SourceManager SM;
  uint32_t Id = SM.addBuffer(Name, Text);
  dsl::OperationCatalog Ops;
  std::vector<double> Times;
  for (unsigned I = 0; I < Runs; ++I) {
    DiagnosticEngine Diags(SM);
    Diags.setSilent(true);
    auto Start = std::chrono::steady_clock::now();
    std::unique_ptr<dsl::Algorithm> Algo = dsl::parseAndCheck(Id, Ops, Diags);
    auto End = std::chrono::steady_clock::now();
    // Freeing the tree is not part of parse+check; it happens after the clock stops.
    Times.push_back(std::chrono::duration<double, std::micro>(End - Start).count());
    if (!Algo) {
      std::fprintf(stderr, "%s: unexpected errors\n", Name.c_str());
      std::exit(1);
    }
  }
  std::nth_element(Times.begin(), Times.begin() + Times.size() / 2, Times.end());
  return Times[Times.size() / 2];
}

/// A ring allreduce body repeated until the file has Lines lines: loops,
/// conditionals, lets and operations in the proportions real algorithms have.
std::string generate(unsigned Lines) {
  std::string Text = "allreduce generated on ring {\n  chunks nranks;\n  let n = nranks;\n";
  unsigned Count = 3;
  for (unsigned Block = 0; Count + 9 <= Lines - 1; ++Block, Count += 9) {
    std::string B = std::to_string(Block);
    Text += "  for s" + B + " in 0 .. n - 1 {\n"
            "    let c" + B + " = (ring.pos - s" + B + ") % n;\n"
            "    if c" + B + " & 1 == 0 {\n"
            "      send(ring.next, output[c" + B + "]);\n"
            "    } else {\n"
            "      recv_reduce(ring.prev, output[(c" + B + " + n - 1) % n]);\n"
            "    }\n"
            "    # step " + B + " done\n"
            "  }\n";
  }
  for (; Count < Lines - 1; ++Count)
    Text += "  send(ring.next, output);\n";
  return Text + "}\n";
}

} // namespace

int main() {
  std::printf("%-34s %8s %12s\n", "algorithm", "lines", "median us");
  for (const auto &Path : dsl::test::libraryFiles()) {
    std::string Text = dsl::test::readFile(Path);
    long Lines = std::count(Text.begin(), Text.end(), '\n');
    std::printf("%-34s %8ld %12.1f\n", Path.filename().c_str(), Lines,
                medianMicros(Path.string(), Text, 201));
  }

  std::printf("\n%-34s %8s %12s %10s\n", "generated file", "lines", "median us", "us/line");
  for (unsigned Lines : {1000u, 10000u, 100000u}) {
    std::string Text = generate(Lines);
    unsigned Runs = Lines >= 100000 ? 11 : 51;
    double Micros = medianMicros("generated.ccl", Text, Runs);
    std::printf("%-34s %8u %12.1f %10.3f\n", ("generated-" + std::to_string(Lines / 1000) + "k")
                                                 .c_str(),
                Lines, Micros, Micros / Lines);
  }
  return 0;
}
