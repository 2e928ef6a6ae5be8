//===- TemplateCatalogTest.cpp - Reading the template library -------------===//
//
// The real host and CUDA libraries must offer every effect under its own
// name, and a user's header must add primitives or be refused with a
// diagnostic that names its file and line. Malformed headers are written to
// a scratch directory so that each test shows the lines it expects. The
// user primitive the lit tests compile with is run here, to show that it
// is a working copy.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/TemplateCatalog.h"
#include "compiler/codegen/Format.h"
#include "test/lit/codegen/Inputs/StreamingCopy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <unistd.h>

namespace cclc::codegen {
namespace {

namespace fs = std::filesystem;

const char *const Effects[] = {"send",          "recv",     "recv_reduce",     "copy",
                               "reduce",        "exchange", "exchange_reduce", "recv_reduce_send",
                               "recv_copy_send", "recv_reduce_copy"};

/// One load of a catalog, with the diagnostics it printed.
struct CatalogLoad {
  CatalogLoad(KernelTarget Target, std::vector<std::string> ExtraHeaders = {},
              std::string TemplateDir = CCLC_SOURCE_DIR "/templates") {
    Catalog =
        TemplateCatalog::load({Target, std::move(TemplateDir), std::move(ExtraHeaders)}, SM, Diags);
  }
  std::string output() const { return Output.str(); }

  SourceManager SM;
  std::ostringstream Output;
  DiagnosticEngine Diags{SM, Output};
  std::optional<TemplateCatalog> Catalog;
};

/// Writes Text to a header of the current test's scratch directory.
std::string writeHeader(const std::string &Name, const std::string &Text) {
  const testing::TestInfo *Test = testing::UnitTest::GetInstance()->current_test_info();
  fs::path Dir = fs::path(testing::TempDir()) /
                 ("cclc-catalog-" + std::to_string(getpid()) + "-" + Test->name());
  fs::create_directories(Dir);
  fs::path Path = Dir / Name;
  std::ofstream(Path) << Text;
  return Path.string();
}

/// Catalog has a primitive named after every effect, with that effect, and
/// Extra primitives besides.
void expectEveryEffect(const TemplateCatalog &Catalog, bool Device, size_t Extra = 0) {
  ASSERT_EQ(Catalog.primitives().size(), std::size(Effects) + Extra);
  for (const char *Effect : Effects) {
    const PrimitiveInfo *P = Catalog.lookup(Effect);
    ASSERT_TRUE(P) << Effect;
    EXPECT_EQ(P->Effect, Effect);
    EXPECT_EQ(P->TemplateParams, 2u) << Effect;
    EXPECT_EQ(P->Device, Device) << Effect;
    EXPECT_GT(P->Line, 0u) << Effect;
  }
}

TEST(TemplateCatalogTest, HostLibraryHasEveryEffect) {
  CatalogLoad L(KernelTarget::Host);
  ASSERT_TRUE(L.Catalog) << L.output();
  EXPECT_EQ(L.output(), "");
  expectEveryEffect(*L.Catalog, /*Device=*/false);
  const PrimitiveInfo *P = L.Catalog->lookup("recv_reduce_send");
  EXPECT_EQ(P->QualifiedName, "cclc::host::recvReduceSend");
  EXPECT_EQ(P->ParamTypes, (std::vector<std::string>{"Inbox &", "Outbox &", "Slice<T>"}));
  EXPECT_TRUE(P->File.ends_with("host/Primitives.h")) << P->File;
  EXPECT_EQ(L.Catalog->lookup("copy")->ParamTypes,
            (std::vector<std::string>{"Slice<const T>", "Slice<T>"}));
  EXPECT_EQ(L.Catalog->includes(), std::vector<std::string>{"host/Kernel.h"});
}

TEST(TemplateCatalogTest, CudaLibraryHasEveryDevicePrimitive) {
  CatalogLoad L(KernelTarget::Cuda);
  ASSERT_TRUE(L.Catalog) << L.output();
  // And the seven communicating effects again for each line protocol.
  expectEveryEffect(*L.Catalog, /*Device=*/true, /*Extra=*/16);
  for (const char *Suffix : {"_ll", "_ll128"})
    for (const char *Effect : Effects)
      if (const PrimitiveInfo *P = L.Catalog->lookup(std::string(Effect) + Suffix)) {
        EXPECT_EQ(P->Effect, Effect);
        EXPECT_EQ(P->ParamTypes, L.Catalog->lookup(Effect)->ParamTypes) << Effect << Suffix;
      }
  ASSERT_TRUE(L.Catalog->lookup("send_ll"));
  EXPECT_EQ(L.Catalog->lookup("send_ll")->QualifiedName, "cclc::cuda::sendLL");
  ASSERT_TRUE(L.Catalog->lookup("send_ll128"));
  EXPECT_EQ(L.Catalog->lookup("send_ll128")->QualifiedName, "cclc::cuda::sendLL128");
  EXPECT_FALSE(L.Catalog->lookup("copy_ll")) << "local steps have no protocol";
  EXPECT_EQ(L.Catalog->lookup("exchange")->ParamTypes,
            (std::vector<std::string>{"Outbox &", "Inbox &", "Slice<const T>", "Slice<T>"}));
  EXPECT_EQ(L.Catalog->includes(), std::vector<std::string>{"cuda/Kernel.cuh"});
}

TEST(TemplateCatalogTest, ExtraHeaderAddsPrimitivesToTheLanguage) {
  std::string Header = writeHeader("Streaming.h", R"(#include "host/Primitives.h"
namespace user {
using cclc::host::Slice;
/// A copy that bypasses the cache.
template <class T, class Op>
CCLC_PRIMITIVE("copy_streaming", "copy")
void copyStreaming(Slice<const T> Src, Slice<T> Dst);
} // namespace user
)");
  CatalogLoad L(KernelTarget::Host, {Header});
  ASSERT_TRUE(L.Catalog) << L.output();
  const PrimitiveInfo *P = L.Catalog->lookup("copy_streaming");
  ASSERT_TRUE(P);
  EXPECT_EQ(P->Effect, "copy");
  EXPECT_EQ(P->QualifiedName, "user::copyStreaming");
  EXPECT_EQ(P->File, Header);
  EXPECT_EQ(P->Line, 7u);
  EXPECT_EQ(L.Catalog->includes(), (std::vector<std::string>{"host/Kernel.h", Header}));

  dsl::OperationCatalog Ops;
  size_t Before = Ops.all().size();
  L.Catalog->extend(Ops);
  ASSERT_EQ(Ops.all().size(), Before + 1);
  const dsl::OperationInfo *Op = Ops.lookup("copy_streaming");
  ASSERT_TRUE(Op);
  EXPECT_EQ(Op->Effect, "copy");
  EXPECT_EQ(Op->signature(), "copy_streaming(src, dst)");
  EXPECT_EQ(Ops.lookup("copy")->Effect, "copy");
}

TEST(TemplateCatalogTest, UnknownEffectIsReportedAtItsLine) {
  std::string Header = writeHeader("UnknownEffect.h", R"(#include "host/Primitives.h"
template <class T, class Op>
CCLC_PRIMITIVE("copy_fast", "cpy")
void copyFast(cclc::host::Slice<const T> Src, cclc::host::Slice<T> Dst);
)");
  CatalogLoad L(KernelTarget::Host, {Header});
  EXPECT_FALSE(L.Catalog);
  EXPECT_NE(L.output().find(Header + ":3:29: error: primitive 'copy_fast' has unknown effect "
                                     "'cpy'"),
            std::string::npos)
      << L.output();
  EXPECT_NE(L.output().find("note: did you mean 'copy'?"), std::string::npos) << L.output();
}

TEST(TemplateCatalogTest, ParametersMustFitTheEffect) {
  std::string Header = writeHeader("WrongKinds.h", R"(#include "host/Primitives.h"
namespace user {
using namespace cclc::host;
template <class T, class Op>
CCLC_PRIMITIVE("send_to_self", "send")
void sendToSelf(Inbox &In, Slice<const T> Src);
template <class T, class Op>
CCLC_PRIMITIVE("copy_back", "copy")
void copyBack(Slice<T> Src, Slice<T> Dst);
template <class T, class Op>
CCLC_PRIMITIVE("reduce_three", "reduce")
void reduceThree(Slice<const T> A, Slice<const T> B, Slice<T> Acc);
} // namespace user
)");
  CatalogLoad L(KernelTarget::Host, {Header});
  EXPECT_FALSE(L.Catalog);
  std::string Out = L.output();
  EXPECT_NE(Out.find(Header + ":6:17: error: parameter 1 of primitive 'send_to_self' is "
                              "'Inbox &', not 'Outbox &'"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("note: primitives with effect 'send' take (Outbox &, Slice<const T>)"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find(Header + ":9:15: error: parameter 1 of primitive 'copy_back' is "
                              "'Slice<T>', not 'Slice<const T>'"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find(Header + ":12:6: error: primitive 'reduce_three' takes 3 parameters, but "
                              "primitives with effect 'reduce' take (Slice<const T>, Slice<T>)"),
            std::string::npos)
      << Out;
}

TEST(TemplateCatalogTest, SyntaxErrorsAreClangsWithTheirLocation) {
  std::string Header = writeHeader("Broken.h", R"(#include "host/Primitives.h"
template <class T, class Op>
CCLC_PRIMITIVE("copy_broken", "copy")
void copyBroken(cclc::host::Slice<const T> Src, cclc::host::Slice<T> Dst
)");
  CatalogLoad L(KernelTarget::Host, {Header});
  EXPECT_FALSE(L.Catalog);
  // The declaration runs to the end of the header, so clang stops after it.
  EXPECT_NE(L.output().find("<primitive headers>:2:" + std::to_string(Header.size() + 12) +
                            ": error: expected ')'"),
            std::string::npos)
      << L.output();
  EXPECT_NE(L.output().find(Header + ":4:16: note: to match this '('"), std::string::npos)
      << L.output();
}

TEST(TemplateCatalogTest, NamesAreCallableAndUnique) {
  std::string Header = writeHeader("Names.h", R"(#include "host/Primitives.h"
namespace user {
using namespace cclc::host;
template <class T, class Op>
CCLC_PRIMITIVE("copy", "copy")
void copyAgain(Slice<const T> Src, Slice<T> Dst);
template <class T, class Op>
CCLC_PRIMITIVE("copy-fast", "copy")
void copyFast(Slice<const T> Src, Slice<T> Dst);
template <class T, class Op>
CCLC_PRIMITIVE("reduce", "copy")
void reduceByCopy(Slice<const T> Src, Slice<T> Dst);
} // namespace user
)");
  CatalogLoad L(KernelTarget::Host, {Header});
  EXPECT_FALSE(L.Catalog);
  std::string Out = L.output();
  EXPECT_NE(Out.find(Header + ":6:6: error: primitive 'copy' is declared twice"), std::string::npos)
      << Out;
  EXPECT_NE(Out.find("note: the first declaration is cclc::host::copy"), std::string::npos) << Out;
  EXPECT_NE(Out.find(Header + ":8:16: error: primitive name 'copy-fast' cannot be called"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find(Header + ":12:6: error: primitive 'reduce' is named after the language's "
                              "'reduce' but has effect 'copy'"),
            std::string::npos)
      << Out;
}

TEST(TemplateCatalogTest, CudaPrimitivesMustBeDeviceFunctions) {
  std::string Header = writeHeader("HostOnly.cuh", R"(#include "cuda/Primitives.cuh"
namespace user {
using namespace cclc::cuda;
template <class T, class Op>
CCLC_PRIMITIVE("copy_host", "copy")
void copyHost(Slice<const T> Src, Slice<T> Dst);
template <class T, class Op>
CCLC_PRIMITIVE("copy_device", "copy")
__device__ void copyDevice(Slice<const T> Src, Slice<T> Dst);
} // namespace user
)");
  CatalogLoad L(KernelTarget::Cuda, {Header});
  EXPECT_FALSE(L.Catalog);
  EXPECT_NE(L.output().find(Header + ":6:6: error: primitive 'copy_host' is not __device__"),
            std::string::npos)
      << L.output();
  EXPECT_EQ(L.output().find("copy_device"), std::string::npos) << L.output();
}

TEST(TemplateCatalogTest, MissingLibraryOrHeaderIsAnError) {
  CatalogLoad NoLibrary(KernelTarget::Host, {}, CCLC_SOURCE_DIR "/docs");
  EXPECT_FALSE(NoLibrary.Catalog);
  EXPECT_NE(NoLibrary.output().find("is not a template library: it has no host/Primitives.h"),
            std::string::npos)
      << NoLibrary.output();
  CatalogLoad NoHeader(KernelTarget::Host, {"no/such/Header.h"});
  EXPECT_FALSE(NoHeader.Catalog);
  EXPECT_NE(NoHeader.output().find("cannot read primitive header 'no/such/Header.h'"),
            std::string::npos)
      << NoHeader.output();
}

TEST(TemplateCatalogTest, CacheLoadsEachTargetOnce) {
  SourceManager SM;
  std::ostringstream Output, Stats;
  DiagnosticEngine Diags(SM, Output);
  CatalogCache Cache(CCLC_SOURCE_DIR "/templates", {}, SM, Diags);
  Cache.setStats(&Stats);
  const TemplateCatalog *Host = Cache.get(KernelTarget::Host);
  ASSERT_TRUE(Host) << Output.str();
  EXPECT_EQ(Cache.get(KernelTarget::Host), Host);
  EXPECT_EQ(Stats.str().rfind("stats: catalog: 10 host primitives from 1 header in ", 0), 0u)
      << Stats.str();
  EXPECT_EQ(Stats.str().find('\n'), Stats.str().size() - 1) << Stats.str();
}

TEST(TemplateCatalogTest, StreamingCopyCopies) {
  // Two chunks of 37 floats, both pieces odd-sized, at an odd offset, so
  // every run has an unaligned head and tail around the streamed middle.
  kern::Layout Grid;
  Grid.Shape = {1, 2, 2};
  Grid.Count = 37;
  Grid.RoundElems = 37;
  Grid.PieceElems = 19;
  std::vector<float> Src(38), Dst(38, -1.0f);
  std::iota(Src.begin(), Src.end(), 1.0f);
  streaming::copyStreaming<float, void>({Src.data() + 1, &Grid, 1, 0, 2},
                                        {Dst.data() + 1, &Grid, 1, 0, 2});
  EXPECT_EQ(Dst[0], -1.0f);
  EXPECT_TRUE(std::equal(Src.begin() + 1, Src.end(), Dst.begin() + 1));
}

TEST(TemplateCatalogTest, FormatsInTheProjectStyle) {
  EXPECT_EQ(
      formatCode("namespace k{void f(int*P){for(int I=0;I<4;++I)P[I]=I;}}", KernelTarget::Host),
      "namespace k {\n"
      "void f(int *P) {\n"
      "  for (int I = 0; I < 4; ++I)\n"
      "    P[I] = I;\n"
      "}\n"
      "} // namespace k");
  std::string Long = "void g(){h(aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbb, cccccccccccccccccccc, "
                     "dddddddddddddddddddd, eeeeeeeeeeeeeeeeeeee);}";
  std::string Formatted = formatCode(Long, KernelTarget::Cuda);
  std::istringstream Lines(Formatted);
  for (std::string Line; std::getline(Lines, Line);)
    EXPECT_LE(Line.size(), 100u) << Formatted;
  EXPECT_NE(Formatted.find("\n"), std::string::npos) << Formatted;
}

} // namespace
} // namespace cclc::codegen
