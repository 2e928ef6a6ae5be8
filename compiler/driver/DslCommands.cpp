//===- DslCommands.cpp - cclc check and cclc parse ------------------------===//

#include "Commands.h"
#include "InputOutput.h"
#include "Templates.h"

#include "dsl/ASTPrinter.h"
#include "dsl/Lexer.h"
#include "dsl/Parser.h"
#include "dsl/Sema.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>

namespace cclc::driver {

void addCheckCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode) {
  CLI::App *Cmd = App.add_subcommand("check", "Parse and check .ccl algorithms; report every "
                                              "error and warning");
  auto Files = std::make_shared<std::vector<std::string>>();
  auto Templates = std::make_shared<TemplateOptions>();
  Cmd->add_option("files", *Files, ".ccl files to check")->required();
  addTemplateOptions(*Cmd, *Templates);
  Cmd->callback([Files, Templates, &Common, &ExitCode] {
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    configure(Diags, Common);
    codegen::CatalogCache Catalogs(Templates->Dir, Templates->Primitives, SM, Diags);
    dsl::OperationCatalog Ops;
    for (const std::string &Path : *Files)
      if (std::optional<uint32_t> Id = loadSource(SM, Diags, Path))
        checkWithTemplates(*Id, Catalogs, codegen::KernelTarget::Host, Ops, Diags);
    ExitCode = Diags.hasErrors() ? 1 : 0;
  });
}

void addParseCommand(CLI::App &App, const CommonOptions &Common, int &ExitCode) {
  CLI::App *Cmd = App.add_subcommand("parse", "Show the tokens or the checked syntax tree of a "
                                              ".ccl file");
  struct Options {
    std::string File;
    std::string Emit = "ast";
  };
  auto Opts = std::make_shared<Options>();
  Cmd->add_option("file", Opts->File, ".ccl file")->required();
  Cmd->add_option("--emit", Opts->Emit, "What to print")
      ->check(CLI::IsMember({"tokens", "ast"}))
      ->capture_default_str();
  Cmd->callback([Opts, &Common, &ExitCode] {
    SourceManager SM;
    DiagnosticEngine Diags(SM);
    configure(Diags, Common);
    std::optional<uint32_t> Id = loadSource(SM, Diags, Opts->File);
    if (!Id) {
      ExitCode = 1;
      return;
    }
    if (Opts->Emit == "tokens") {
      dsl::Lexer Lex(SM, *Id, Diags);
      dsl::printTokens(Lex.lexAll(), std::cout);
    } else {
      dsl::Parser P(SM, *Id, Diags);
      std::unique_ptr<dsl::Algorithm> Algo = P.parseAlgorithm();
      if (Algo && !Diags.hasErrors()) {
        dsl::OperationCatalog Ops;
        dsl::Sema(Diags, Ops).check(*Algo);
        dsl::printAST(*Algo, std::cout);
      }
    }
    ExitCode = Diags.hasErrors() ? 1 : 0;
  });
}

} // namespace cclc::driver
