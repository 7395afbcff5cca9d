#include "vigil/core/yaml_fields.h"

#include <gtest/gtest.h>

namespace vigil {
namespace {

TEST(LoadYamlTest, NamesSourceAndLineOfASyntaxError) {
  EXPECT_TRUE(LoadYaml("a: 1\n", "f.yaml").ok());
  Result<YAML::Node> doc = LoadYaml("a: 1\nb: [2\n", "f.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(doc.status().message().starts_with("f.yaml:3: not valid YAML: "))
      << doc.status().message();
}

TEST(YamlFieldsTest, NamesLineAndFieldOfEachProblem) {
  const YAML::Node doc = *LoadYaml("a: 1\nb:\n  c: x\n  d: 2.5\nt: 5m\n", "f.yaml");
  const YamlFields f("f.yaml", "model");
  EXPECT_TRUE(f.Map(doc, "", {"a", "b", "t"}).ok());
  EXPECT_EQ(f.Map(doc, "", {"a", "t"}).message(),
            "f.yaml:2: b: unknown key (expected one of a, t)");
  EXPECT_EQ(f.Map(doc["a"], "", {"x"}).message(),
            "f.yaml:1: model: expected a mapping of keys to values");
  EXPECT_EQ(*f.Whole(doc["a"], "a", 1, 2), 1);
  EXPECT_EQ(f.Whole(doc["b"]["d"], "b.d", 0, 9).status().message(),
            "f.yaml:4: b.d: expected a whole number, got 2.5");
  EXPECT_EQ(f.Number(doc["b"]["c"], "b.c", 0, 9).status().message(),
            "f.yaml:3: b.c: expected a number, got \"x\"");
  EXPECT_EQ(f.Number(doc["b"]["d"], "b.d", 3, 9).status().message(),
            "f.yaml:4: b.d: 2.5 is out of range (3 to 9)");
  EXPECT_EQ(f.Choice(doc["b"]["c"], "b.c", {"y", "z"}).status().message(),
            "f.yaml:3: b.c: \"x\" is not one of y, z");
  EXPECT_EQ(f.Text(doc["b"], "b").status().message(), "f.yaml:3: b: expected a text");
  EXPECT_DOUBLE_EQ(*f.Seconds(doc["t"], "t", 1, 3600), 300);
  EXPECT_EQ(YamlFields::Path("b", "c"), "b.c");
  EXPECT_EQ(YamlFields::Path("", "c"), "c");
}

}  // namespace
}  // namespace vigil
