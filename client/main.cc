// ablation-client: the command-line client of ablationd. The subcommands are wired in app.cc.
#include <iostream>
#include <string>
#include <vector>

#include "client/app.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  return ablation::client::RunApp(args, std::cout, std::cerr);
}
