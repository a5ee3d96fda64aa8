use super::*;

/// The lanes of `a` along `axis` as a 2-D array (lane, element), for tests of `lanes_last`.
fn lanes_by_ndarray(a: &ArrayD<u64>, axis: usize) -> Vec<Vec<u64>> {
    a.lanes(numpy::ndarray::Axis(axis))
        .into_iter()
        .map(|l| l.to_vec())
        .collect()
}

#[test]
fn broadcasts_as_numpy_does() {
    assert_eq!(broadcast_shape(&[&[2, 3], &[3]]), Ok(vec![2, 3]));
    assert_eq!(broadcast_shape(&[&[4, 1], &[1, 5]]), Ok(vec![4, 5]));
    assert_eq!(broadcast_shape(&[&[], &[7]]), Ok(vec![7]));
    assert_eq!(broadcast_shape(&[&[0], &[1]]), Ok(vec![0]));
    assert_eq!(
        broadcast_shape(&[&[2, 1, 3], &[4, 1], &[]]),
        Ok(vec![2, 4, 3])
    );
    assert_eq!(
        broadcast_shape(&[&[2, 3], &[4]]),
        Err("operands could not be broadcast together with shapes (2, 3) (4,)".into())
    );
    let a = ArrayD::from_shape_vec(IxDyn(&[2, 1]), vec![1u64, 2]).unwrap();
    assert_eq!(broadcast_to(&a, &[2, 3]), [1, 1, 1, 2, 2, 2]);
}

#[test]
fn moves_an_axis_last_as_ndarray_lanes_order_it() {
    let shape = [2, 3, 4];
    let data: Vec<u64> = (0..24).collect();
    let a = ArrayD::from_shape_vec(IxDyn(&shape), data.clone()).unwrap();
    for axis in 0..3 {
        let moved = lanes_last(data.clone(), &shape, axis);
        let k = shape[axis];
        let lanes: Vec<Vec<u64>> = moved.chunks(k).map(|c| c.to_vec()).collect();
        assert_eq!(lanes, lanes_by_ndarray(&a, axis), "axis {axis}");
    }
    assert_eq!(without_axis(&shape, 1), [2, 4]);
}

#[test]
fn parallel_map_keeps_order_and_reports_the_first_error() {
    let n = 5 * MIN_CHUNK + 17;
    let v = par_map(n, |i| i as u64 * 3);
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 3));
    let r = par_try_map(n, |i| if i % 40_000 == 39_999 { Err(i) } else { Ok(i) });
    assert_eq!(r, Err(39_999));
    assert_eq!(par_map(0, |i| i), Vec::<usize>::new());
}
