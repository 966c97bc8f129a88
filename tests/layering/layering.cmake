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
