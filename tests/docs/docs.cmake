# Included from tests/CMakeLists.txt: paths are relative to tests/.

# ---- the README fits on one screen, names the main job and the test command, and every link of
# it and of docs/ resolves; the main job's second half (scripts/demo.sh) runs without a GPU
add_test(NAME docs.readme
  COMMAND ${ABLATION_PYTHON} -m pytest -q -p no:cacheprovider
          ${CMAKE_CURRENT_SOURCE_DIR}/docs/test_readme.py
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/docs)
set_tests_properties(docs.readme PROPERTIES LABELS docs TIMEOUT 120
  ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;ABLATION_BIN_DIR=$<TARGET_FILE_DIR:ablationd>")
