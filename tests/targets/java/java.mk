# SPDX-License-Identifier: GPL-2.0-only
# The JIT workload of tests/integration/test_java.py and bench/runtimes.sh, and the allocation
# workload of tests/integration/test_javaalloc.py and bench/javaalloc.sh, compiled with javac
# into $(BUILD)/javatargets/. Without a JDK nothing is built and the Java tests skip.
JAVA_SRC := tests/targets/java
JAVA_DIR := $(BUILD)/javatargets
JAVAC := $(shell command -v javac 2>/dev/null)
TEST_TARGETS += $(JAVA_DIR)/java.stamp

$(JAVA_DIR)/java.stamp: $(JAVA_SRC)/Hot.java $(JAVA_SRC)/Alloc.java
	@mkdir -p $(@D)
	@rm -f $(JAVA_DIR)/*.class
	if [ -n "$(JAVAC)" ]; then \
		$(JAVAC) -d $(JAVA_DIR) $^; \
	else \
		echo "javac not found: Hot.class not built"; \
	fi
	touch $@
