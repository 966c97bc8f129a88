# Included from tests/CMakeLists.txt: paths are relative to tests/.

# ---- the walls of server/core: no include runs from a lower folder to a higher one
# (tests/layering/check_layers.py; the folders are in server/core/README.md)
add_test(NAME layering.core
  COMMAND ${ABLATION_PYTHON} -m pytest -q -p no:cacheprovider
          ${CMAKE_CURRENT_SOURCE_DIR}/layering/test_layers.py
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/layering)
set_tests_properties(layering.core PROPERTIES LABELS layering TIMEOUT 60
  ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")

# ---- no comment or text names a seed or an issue by number instead of saying what it stands for
add_test(NAME layering.comments
  COMMAND ${ABLATION_PYTHON} -m pytest -q -p no:cacheprovider
          ${CMAKE_CURRENT_SOURCE_DIR}/layering/test_comments.py
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/layering)
set_tests_properties(layering.comments PROPERTIES LABELS layering TIMEOUT 60
  ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")

# ---- the shape of the code: no function over 120 lines in server/, client/, db/, kernels/ and
# common/ (migrations and generated code aside), no block of 10 lines twice in server/, client/,
# kernels/ and common/ unless a comment at both says why (tests/layering/check_code.py; Universal
# Ctags, which scripts/install-deps.sh installs)
add_test(NAME layering.code
  COMMAND ${ABLATION_PYTHON} -m pytest -q -p no:cacheprovider
          ${CMAKE_CURRENT_SOURCE_DIR}/layering/test_code.py
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/layering)
set_tests_properties(layering.code PROPERTIES LABELS layering TIMEOUT 120
  ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1")
