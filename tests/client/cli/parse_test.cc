#include "client/cli/parse.h"

#include <gtest/gtest.h>

#include <limits>

namespace ablation::client {
namespace {

v1::Shape Shape(std::string_view text) {
  v1::Shape shape;
  std::string error = ParseShape(text, &shape);
  EXPECT_EQ(error, "") << text;
  return shape;
}

std::string ShapeError(std::string_view text) {
  v1::Shape shape;
  return ParseShape(text, &shape);
}

TEST(ParseShapeTest, AcceptsMxNxK) {
  v1::Shape s = Shape("4096x2048x512");
  EXPECT_EQ(s.m(), 4096);
  EXPECT_EQ(s.n(), 2048);
  EXPECT_EQ(s.k(), 512);
  EXPECT_EQ(Shape("1X2X3").k(), 3);
}

TEST(ParseShapeTest, OneNumberMeansCube) {
  v1::Shape s = Shape("4096");
  EXPECT_EQ(s.m(), 4096);
  EXPECT_EQ(s.n(), 4096);
  EXPECT_EQ(s.k(), 4096);
}

TEST(ParseShapeTest, RefusesNonPositive) {
  EXPECT_NE(ShapeError("4096x0x4096").find("N must be positive"), std::string::npos);
  EXPECT_NE(ShapeError("-5x1x1").find("M must be positive"), std::string::npos);
  EXPECT_NE(ShapeError("0").find("must be positive"), std::string::npos);
}

TEST(ParseShapeTest, RefusesWhatIsNotANumber) {
  EXPECT_NE(ShapeError("abc").find("not a number"), std::string::npos);
  EXPECT_NE(ShapeError("1x2xk").find("K is not a number"), std::string::npos);
  EXPECT_NE(ShapeError("1.5x2x3").find("M is not a number"), std::string::npos);
  EXPECT_NE(ShapeError(" 1x2x3").find("not a number"), std::string::npos);
  EXPECT_NE(ShapeError("1x2x").find("K is missing"), std::string::npos);
  EXPECT_NE(ShapeError("99999999999999999999x1x1").find("too large"), std::string::npos);
}

TEST(ParseShapeTest, RefusesWrongNumberOfDimensions) {
  EXPECT_NE(ShapeError("1x2").find("expected MxNxK"), std::string::npos);
  EXPECT_NE(ShapeError("1x2x3x4").find("expected MxNxK"), std::string::npos);
  EXPECT_NE(ShapeError("").find("empty"), std::string::npos);
}

TEST(ParseShapeTest, ErrorQuotesTheInput) {
  EXPECT_EQ(ShapeError("4096x0x4096"), "'4096x0x4096': N must be positive");
}

std::int64_t Ms(std::string_view text) {
  std::int64_t ms = -1;
  EXPECT_EQ(ParseTimeMs(text, &ms), "") << text;
  return ms;
}

std::string TimeError(std::string_view text) {
  std::int64_t ms = 0;
  return ParseTimeMs(text, &ms);
}

TEST(ParseTimeTest, AcceptsIsoUtc) {
  EXPECT_EQ(Ms("2026-11-30T12:00:00Z"), 1796040000000);
  EXPECT_EQ(Ms("2026-11-30t12:00:00z"), 1796040000000);
  EXPECT_EQ(Ms("2026-11-30T12:00Z"), 1796040000000);
  EXPECT_EQ(Ms("2026-11-30 12:00:00Z"), 1796040000000);
  EXPECT_EQ(Ms("2024-02-29T23:59:59.250Z"), 1709251199250);
  EXPECT_EQ(Ms("2024-02-29T23:59:59.2509Z"), 1709251199250);
}

TEST(ParseTimeTest, DateAloneIsMidnightUtc) {
  EXPECT_EQ(Ms("2026-11-30"), 1795996800000);
  EXPECT_EQ(Ms("1970-01-01"), 0);
}

TEST(ParseTimeTest, AcceptsOffsets) {
  EXPECT_EQ(Ms("2026-11-30T12:00:00+02:00"), 1796032800000);
  EXPECT_EQ(Ms("2026-11-30T08:00:00-02:00"), 1796032800000);
}

TEST(ParseTimeTest, AcceptsUnixMilliseconds) {
  EXPECT_EQ(Ms("1796040000000"), 1796040000000);
  EXPECT_EQ(Ms("0"), 0);
}

TEST(ParseTimeTest, RefusesBadInput) {
  EXPECT_NE(TimeError("").find("empty"), std::string::npos);
  EXPECT_NE(TimeError("yesterday").find("expected ISO 8601"), std::string::npos);
  EXPECT_NE(TimeError("-5").find("expected ISO 8601"), std::string::npos);
  EXPECT_NE(TimeError("2026-13-01").find("month"), std::string::npos);
  EXPECT_NE(TimeError("2023-02-29").find("day out of range"), std::string::npos);
  EXPECT_NE(TimeError("2026-11-31").find("day out of range"), std::string::npos);
  EXPECT_NE(TimeError("2026-11-30T24:00:00Z").find("time of day"), std::string::npos);
  EXPECT_NE(TimeError("2026-11-30T12:00:00").find("time zone"), std::string::npos);
  EXPECT_NE(TimeError("2026-11-30T12:00:00Zjunk").find("expected ISO 8601"), std::string::npos);
  EXPECT_NE(TimeError("2026-11-30T12").find("expected ISO 8601"), std::string::npos);
  EXPECT_NE(TimeError("2026/11/30").find("expected ISO 8601"), std::string::npos);
  EXPECT_NE(TimeError("99999999999999999999").find("too large"), std::string::npos);
}

TEST(ParseRunIdTest, AcceptsIdsAndLatest) {
  std::int64_t id = -1;
  EXPECT_EQ(ParseRunId("42", &id, false), "");
  EXPECT_EQ(id, 42);
  EXPECT_EQ(ParseRunId("latest", &id, true), "");
  EXPECT_EQ(id, 0);
  EXPECT_NE(ParseRunId("latest", &id, false), "");
  EXPECT_NE(ParseRunId("0", &id, true), "");
  EXPECT_NE(ParseRunId("-3", &id, true), "");
  EXPECT_NE(ParseRunId("x", &id, true), "");
}

TEST(ParseOrThrowTest, ThrowsOnBadInput) {
  EXPECT_THROW(ParseShapeOrThrow("0"), std::invalid_argument);
  EXPECT_THROW(ParseTimeMsOrThrow("soon"), std::invalid_argument);
  EXPECT_EQ(ParseShapeOrThrow("8").n(), 8);
}

}  // namespace
}  // namespace ablation::client

namespace ablation::client {
namespace {

TEST(ParseShapeTest, NamesASeparatorOtherThanX) {
  EXPECT_EQ(ShapeError("4096*4096*4096"),
            "'4096*4096*4096': separate M, N and K with 'x', not '*' (e.g. 4096x4096x4096)");
  EXPECT_NE(ShapeError("4096,4096,4096").find("not ','"), std::string::npos);
  EXPECT_NE(ShapeError("4096\xc3\x97"
                       "4096\xc3\x97"
                       "4096")
                .find("not '\xc3\x97'"),
            std::string::npos);
  EXPECT_NE(ShapeError("4096 * 4096 * 4096").find("not ' * '"), std::string::npos);
}

TEST(CheckWholeNumberTest, SaysWhatIsWrong) {
  EXPECT_EQ(CheckWholeNumber("3", 1, 100), "");
  EXPECT_EQ(CheckWholeNumber("abc", 1, 100), "'abc' is not a number");
  EXPECT_EQ(CheckWholeNumber("1.5", 1, 100), "'1.5' is not a whole number");
  EXPECT_EQ(CheckWholeNumber("", 1, 100), "'' is not a number");
  EXPECT_EQ(CheckWholeNumber("200", 1, 100), "'200' is out of range: 1 to 100");
  EXPECT_EQ(CheckWholeNumber("-1", 0, std::numeric_limits<std::int64_t>::max()), "'-1' is below 0");
  EXPECT_EQ(CheckWholeNumber("99999999999999999999", 1, 100),
            "'99999999999999999999' is out of range: 1 to 100");
}

TEST(CheckRealNumberTest, SaysWhatIsWrong) {
  EXPECT_EQ(CheckRealNumber("0.5", false), "");
  EXPECT_EQ(CheckRealNumber("2e-3", false), "");
  EXPECT_EQ(CheckRealNumber("abc", false), "'abc' is not a number");
  EXPECT_EQ(CheckRealNumber("0", false), "'0' must be more than 0");
  EXPECT_EQ(CheckRealNumber("0", true), "");
  EXPECT_EQ(CheckRealNumber("-2", true), "'-2' is below 0");
  EXPECT_EQ(CheckRealNumber("inf", false), "'inf' is not a number");
}

}  // namespace
}  // namespace ablation::client
