package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// UnmarshalYAML reads [x, y].
func (p *Point) UnmarshalYAML(n *yaml.Node) error {
	var v []int
	if err := n.Decode(&v); err != nil || len(v) != 2 {
		return fmt.Errorf("line %d: want a position [x, y]", n.Line)
	}
	p.X, p.Y = v[0], v[1]
	return nil
}

// MarshalYAML writes [x, y] on one line.
func (p Point) MarshalYAML() (any, error) { return flowInts(p.X, p.Y), nil }

// UnmarshalYAML reads [x, y, width, height].
func (r *Rect) UnmarshalYAML(n *yaml.Node) error {
	var v []int
	if err := n.Decode(&v); err != nil || len(v) != 4 {
		return fmt.Errorf("line %d: want a region [x, y, width, height]", n.Line)
	}
	r.X, r.Y, r.W, r.H = v[0], v[1], v[2], v[3]
	return nil
}

// MarshalYAML writes [x, y, width, height] on one line.
func (r Rect) MarshalYAML() (any, error) { return flowInts(r.X, r.Y, r.W, r.H), nil }

func flowInts(v ...int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, i := range v {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(i)})
	}
	return n
}
